import Foundation
import Testing

@testable import BackofficePlatform

@Suite("Outbound addresses: only public unicast addresses are reachable from a user's URL")
struct OutboundAddressTests {
    @Test("each kind of address the service must not call is refused for its reason; public ones pass")
    func classified() {
        let cases: [(String, OutboundAddress.Refusal?)] = [
            ("93.184.215.14", nil), ("8.8.8.8", nil), ("2606:4700::1111", nil), ("64:ff9b::808:808", nil),
            ("127.0.0.1", .loopback), ("127.255.0.9", .loopback), ("::1", .loopback), ("::ffff:127.0.0.1", .loopback),
            ("::127.0.0.1", .loopback), ("2002:7f00:1::", .loopback),
            ("10.0.0.1", .privateNetwork), ("172.16.0.1", .privateNetwork), ("172.31.255.255", .privateNetwork),
            ("192.168.0.1", .privateNetwork), ("fd12::5", .privateNetwork), ("fc00::1", .privateNetwork),
            ("::ffff:10.0.0.1", .privateNetwork), ("64:ff9b::a00:1", .privateNetwork), ("fec0::1", .privateNetwork),
            ("169.254.1.1", .linkLocal), ("fe80::1", .linkLocal), ("febf::1", .linkLocal),
            ("169.254.169.254", .metadata), ("fd00:ec2::254", .metadata), ("100.100.100.200", .metadata),
            ("::ffff:169.254.169.254", .metadata),
            ("0.0.0.0", .reserved), ("::", .reserved), ("100.64.0.1", .reserved), ("224.0.0.1", .reserved),
            ("255.255.255.255", .reserved), ("192.0.2.1", .reserved), ("198.18.0.1", .reserved),
            ("ff02::1", .reserved), ("2001:db8::1", .reserved), ("2001:0:4136:e378::1", .reserved),
            ("64:ff9b:1::1", .reserved), ("4000::1", .reserved),
            ("localhost", .notAnAddress), ("127.1", .notAnAddress), ("0x7f000001", .notAnAddress),
        ]
        for (address, expected) in cases {
            #expect(OutboundAddress.refusal(address) == expected, "\(address)")
        }
        #expect(OutboundAddress.refusal("172.15.0.1") == nil && OutboundAddress.refusal("172.32.0.1") == nil)
    }

    @Test("a URL over 2,048 characters is refused before it is parsed (100,000 characters; 10,000 nested brackets)")
    func longURLsRefused() async throws {
        let resolver = TableResolver([:])
        for text in [
            "https://" + String(repeating: "a", count: 100_000) + ".example/",
            "https://" + String(repeating: "[", count: 10_000) + "::1" + String(repeating: "]", count: 10_000),
        ] {
            await #expect(throws: OutboundTarget.Refused(description: "not an absolute URL")) {
                try await OutboundTarget.check(text, rules: .serve, resolver: resolver)
            }
        }
    }
}
