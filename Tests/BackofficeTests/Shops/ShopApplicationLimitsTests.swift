import Foundation
import HTTPTypes
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

extension ShopApplicationTests {
    @Test(
        """
        applications are limited per /64 for IPv6: addresses of one network share the limit, another network has \
        its own
        """
    )
    func ipv6SubmissionsShareTheirNetworkLimit() async throws {
        try await TestEnvironment.with { env in
            let limit = env.policies.security.publicSubmissionLimit
            try await env.withApp(trustedProxies: [try CIDR("127.0.0.1/32")]) { client in
                for n in 1...limit {
                    let reply = try await client.call(
                        .post, "/v1/shop-applications", token: nil,
                        json: ShopForm.json(legalName: "Shop \(n)", taxID: "12-34567\(n % 10)\(n / 10)"),
                        headers: ["X-Forwarded-For": "2001:db8:0:1::\(String(n, radix: 16))"])
                    #expect(reply.status == 201, "\(reply.text)")
                }
                let sameNetwork = try await client.call(
                    .post, "/v1/shop-applications", token: nil, json: ShopForm.json(legalName: "One More"),
                    headers: ["X-Forwarded-For": "2001:db8:0:1:ffff::9"])
                #expect(sameNetwork.status == 429, "another address of the same /64: \(sameNetwork.text)")
                let otherNetwork = try await client.call(
                    .post, "/v1/shop-applications", token: nil, json: ShopForm.json(legalName: "Other Net"),
                    headers: ["X-Forwarded-For": "2001:db8:0:2::1"])
                #expect(otherNetwork.status == 201)
            }
        }
        #expect(ClientAddress.limitKey("2001:db8:0:1:ffff::9") == "2001:db8:0:1::/64")
        #expect(ClientAddress.limitKey("203.0.113.7") == "203.0.113.7")
    }

    @Test("public submissions are limited per address: 429 with Retry-After over the limit; other addresses unaffected")
    func submissionsAreRateLimited() async throws {
        try await TestEnvironment.with { env in
            let limit = env.policies.security.publicSubmissionLimit
            try await env.withApp(trustedProxies: [try CIDR("127.0.0.1/32")]) { client in
                let spammer = ["X-Forwarded-For": "203.0.113.9"]
                var statuses: [Int] = []
                for index in 0..<(limit + 2) {
                    let reply = try await client.call(
                        .post, "/v1/shop-applications", token: nil,
                        json: ShopForm.json(legalName: "Spam \(index)", taxID: "12-00000\(10 + index)"),
                        headers: spammer)
                    statuses.append(reply.status)
                    if reply.status == 429 { #expect(Int(reply.headers[.retryAfter] ?? "") ?? 0 >= 1) }
                }
                #expect(statuses == Array(repeating: 201, count: limit) + [429, 429])
                let elsewhere = try await client.call(
                    .post, "/v1/shop-applications", token: nil,
                    json: ShopForm.json(legalName: "Honest Shop", taxID: "12-7654321"),
                    headers: ["X-Forwarded-For": "198.51.100.4"])
                #expect(elsewhere.status == 201)
            }
        }
    }
}
