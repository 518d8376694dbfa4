import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Recommendations: drafts, publish, retract, the dry run, and what the app reads per customer")
struct RecommendationsAPITests {
    static let draft = #"""
        {"kind":"exercise","title":"Walk after dinner","body":"Ten minutes **after dinner**.<script>alert(1)</script>",
         "audience":{"subscriptions":["active"]}}
        """#

    @Test(
        """
        a manager drafts, publishes and retracts (each audited once); the app sees only what is published, \
        for a customer the rule selects, with ETag then 304; experts, partners and auditors cannot write; \
        If-Match is required and checked; a retract needs a reason; an unknown customer is 404
        """
    )
    func lifecycle() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let app = env.fixture.tokens[.appService]!
            let subscriber = try await env.customer()
            let other = try await env.customer()
            try await env.asOwner("UPDATE customers SET subscription = 'active' WHERE id = '\(subscriber.id)'")
            try await env.withApp { client in
                let writers = [Role.expert, .auditor, .appService].map { env.fixture.tokens[$0]! }
                for token in writers + [env.fixture.partners[0].adminToken] {
                    let refused = try await client.call(.post, "/v1/recommendations", token: token, json: Self.draft)
                    #expect(refused.status == 403, "only managers draft")
                }
                let created = try await client.call(.post, "/v1/recommendations", token: manager, json: Self.draft)
                #expect(created.status == 201 && created["status"] == "draft", "\(created.text)")
                #expect(created["html"] == "<p>Ten minutes <strong>after dinner</strong>.</p>", "rendered inert")
                let id = try #require(created["id"])
                let path = "/v1/recommendations/\(id)"
                let forSubscriber = "/v1/customers/\(subscriber.id.text)/recommendations"
                #expect(
                    try await client.call(.get, forSubscriber, token: app).text == #"{"items":[]}"#,
                    "a draft shows nowhere")

                let unversioned = try await client.call(.put, path, token: manager, json: Self.draft)
                #expect(unversioned.status == 428)
                let stale = try await client.call(
                    .put, path, token: manager, json: Self.draft, headers: ["If-Match": "\"7\""])
                #expect(stale.status == 412)
                #expect(try await client.call(.post, "\(path)/publish", token: manager)["status"] == "published")

                let seen = try await client.call(.get, forSubscriber, token: app)
                #expect(seen.status == 200 && seen.text.contains("Walk after dinner"), "\(seen.text)")
                let etag = try #require(seen.headers[.eTag])
                let again = try await client.call(.get, forSubscriber, token: app, headers: ["If-None-Match": etag])
                #expect(again.status == 304 && again.text.isEmpty)
                let notSelected = try await client.call(
                    .get, "/v1/customers/\(other.id.text)/recommendations", token: app)
                #expect(notSelected.text == #"{"items":[]}"#, "the rule selects active subscribers only")
                let unknown = try await client.call(
                    .get, "/v1/customers/\(UUID().uuidString)/recommendations", token: app)
                #expect(unknown.status == 404)

                let noReason = try await client.call(.post, "\(path)/retract", token: manager, json: #"{"reason":" "}"#)
                #expect(noReason.status == 422)
                let retracted = try await client.call(
                    .post, "\(path)/retract", token: manager, json: #"{"reason":"Replaced by a longer plan."}"#)
                #expect(retracted["status"] == "retracted")
                let after = try await client.call(.get, forSubscriber, token: app, headers: ["If-None-Match": etag])
                #expect(after.status == 200 && after.text == #"{"items":[]}"#, "a retraction changes the ETag")
                let twice = try await client.call(
                    .post, "\(path)/retract", token: manager, json: #"{"reason":"Again."}"#)
                #expect(twice.status == 409)
                for action in ["create", "publish", "retract"] {
                    #expect(try await env.auditCount("recommendations.\(action)") == 1, "\(action) audited once")
                }
                #expect(try await env.auditCount("recommendations.update") == 0, "refused edits change nothing")
            }
        }
    }

    @Test("a window already over cannot be published (422); a window not yet open shows nothing until it opens")
    func validityWindow() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let app = env.fixture.tokens[.appService]!
            let customer = try await env.customer()
            let now = env.clock.now()
            @Sendable func draft(from: Date?, until: Date?) -> String {
                let window = [
                    from.map { #""valid_from":"\#($0.formatted(.iso8601))""# },
                    until.map { #""valid_until":"\#($0.formatted(.iso8601))""# },
                ].compactMap { $0 }
                return #"{"kind":"nutrition","title":"Soup","body":"Eat soup."\#(window.map { "," + $0 }.joined())}"#
            }
            try await env.withApp { client in
                let over = try await client.call(
                    .post, "/v1/recommendations", token: manager,
                    json: draft(from: nil, until: now.addingTimeInterval(-60)))
                let refused = try await client.call(
                    .post, "/v1/recommendations/\(try #require(over["id"]))/publish", token: manager)
                #expect(refused.status == 422, "\(refused.text)")
                let later = try await client.call(
                    .post, "/v1/recommendations", token: manager,
                    json: draft(from: now.addingTimeInterval(3600), until: now.addingTimeInterval(7200)))
                _ = try await client.call(
                    .post, "/v1/recommendations/\(try #require(later["id"]))/publish", token: manager)
                let path = "/v1/customers/\(customer.id.text)/recommendations"
                #expect(try await client.call(.get, path, token: app).text == #"{"items":[]}"#)
                env.clock.advance(by: 3601)
                #expect(try await client.call(.get, path, token: app).text.contains("Soup"))
                env.clock.advance(by: 3600)
                #expect(try await client.call(.get, path, token: app).text == #"{"items":[]}"#)
            }
        }
    }

    @Test(
        """
        property: over generated customers and rules, what the app reads for each customer and each rule's \
        dry-run count are exactly what a straightforward filter in Swift selects
        """
    )
    func audienceProperty() async throws {
        try await TestEnvironment.with { env in
            var random = SplitMix64(seed: 0x5EED_0036)
            let statuses = ["active", "active", "active", "locked", "deleted"]
            var values: [String] = []
            for index in 0..<120 {
                let subscription = Subscription.allCases.randomElement(using: &random)!.rawValue
                let status = statuses.randomElement(using: &random)!
                values.append(
                    """
                    ('\(UUID())', 'p\(index)@example.com', 'Customer \(index)', '\(status)', '\(subscription)', \
                    \(status == "deleted" ? "now()" : "NULL"))
                    """)
            }
            try await env.asOwner(
                """
                INSERT INTO customers (id, email, display_name, status, subscription, deleted_at)
                VALUES \(values.joined(separator: ", "))
                """)
            let customers = try await env.database.read(
                ListCustomerAccounts(includeDeleted: true, limit: 500), context: env.context(.backendManager))
            var published: [Recommendation] = []
            for index in 0..<12 {
                let states = Set(Subscription.allCases.filter { _ in Bool.random(using: &random) })
                let audience = Recommendation.Audience(subscriptions: states)
                let made = try await env.database.run(
                    CreateRecommendation(
                        RecommendationDraft(
                            kind: .exercise, title: "Rule \(index)", body: "Body \(index)", audience: audience,
                            validFrom: nil, validUntil: nil)), context: env.context(.backendManager))
                published.append(
                    try await env.database.run(
                        PublishRecommendation(id: made.id), context: env.context(.backendManager)))
                let reach = try await env.database.read(AudienceReach(audience), context: env.context(.backendManager))
                let expected = customers.filter { $0.status == .active && audience.selects($0, at: env.clock.now()) }
                #expect(reach.count == expected.count, "rule \(states.map(\.rawValue).sorted())")
                #expect(reach.sample.allSatisfy { $0.status == .active && audience.selects($0, at: env.clock.now()) })
                #expect(reach.sample.count == min(10, expected.count))
            }
            for customer in customers {
                let read = try await env.database.read(
                    CustomerRecommendations(customerID: customer.id), context: env.context(.appService))
                let expected = published.filter { $0.audience.selects(customer, at: env.clock.now()) }
                #expect(Set(read.map(\.id)) == Set(expected.map(\.id)), "customer \(customer.subscription)")
                #expect(read.map(\.publishedAt) == read.map(\.publishedAt).sorted(by: >), "newest first")
            }
            let plain = try await env.database.read(
                AudienceReach(Recommendation.Audience()), context: env.context(.backendManager))
            let masked = try await env.database.read(
                AudienceReach(Recommendation.Audience()), context: env.context(.auditor))
            #expect(masked.sample.map(\.id) == plain.sample.map(\.id) && !masked.sample.isEmpty)
            #expect(zip(masked.sample, plain.sample).allSatisfy { $0.email != $1.email }, "masked for the auditor")
        }
    }
}
