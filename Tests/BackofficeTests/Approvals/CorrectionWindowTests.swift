import BackofficeAPI
import Foundation
import HummingbirdTesting
import Testing

@testable import Backoffice
@testable import BackofficePlatform

/// The FitPoints correction threshold counts an account's corrections of the last 24 hours, so a
/// correction split in parts is held as the whole would be (`AdjustFitPoints.recentlyCorrected`).
@Suite("Two-person approval: FitPoints corrections counted over 24 hours, so splitting escapes nothing")
struct CorrectionWindowTests {
    let approvals = ApprovalTests()

    @Test(
        """
        +6,000 is made and its repeat under the same key replays 201; a second +6,000 is held (12,000 in \
        all), so is -6,000 (either way counts); a correction made since makes the held one's approval 409 \
        corrections_changed and it stays pending; 24 h on, +6,000 is made at once
        """
    )
    func splitCorrections() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let second = try await approvals.secondManager(env)
            let customer = try await env.customer()
            try await env.withApp { client in
                let first = try await approvals.adjust(client, manager, customer, 6_000, key: "first-part")
                #expect(first.status == 201, "\(first.text)")
                let repeated = try await approvals.adjust(client, manager, customer, 6_000, key: "first-part")
                #expect(repeated.status == 201 && repeated.text == first.text, "the key's answer, not a hold")
                let held = try await approvals.adjust(client, manager, customer, 6_000)
                #expect(held.status == 202, "\(held.text)")
                let request = try held.decode(Components.Schemas.ApprovalRequest.self)
                #expect(request.amount == 12_000 && request.summary.hasSuffix("6,000 corrected in the last 24 h"))
                #expect(try await approvals.adjust(client, manager, customer, -6_000).status == 202, "either way")
                #expect(try await approvals.balance(client, manager, customer) == 6_000)

                #expect(try await approvals.adjust(client, manager, customer, -100).status == 201, "6,100 in all")
                let stale = try await approvals.decide(client, second, request.id, "approve")
                #expect(stale.status == 409 && stale["code"] == "corrections_changed", "\(stale.text)")
                let pending = try await client.call(.get, "/v1/approvals/\(request.id)", token: second)
                #expect(pending["status"] == "pending")
                #expect(try await approvals.balance(client, manager, customer) == 5_900)

                env.clock.advance(by: 24 * 3600 + 1)
                #expect(try await approvals.adjust(client, manager, customer, 6_000).status == 201, "a day on")
                #expect(try await approvals.balance(client, manager, customer) == 11_900)
            }
        }
    }

    @Test(
        """
        30 corrections of +400 to one account at once: exactly 25 are made (10,000 in all, the threshold); \
        the others are held (202) or 409 corrections_changed, and the balance is what was made
        """
    )
    func thirtyAtOnce() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let customer = try await env.customer()
            try await env.withApp { client in
                let replies = try await withThrowingTaskGroup(of: Reply.self) { group in
                    for _ in 0..<30 {
                        group.addTask { try await approvals.adjust(client, manager, customer, 400) }
                    }
                    return try await group.reduce(into: [Reply]()) { $0.append($1) }
                }
                let made = replies.filter { $0.status == 201 }.count
                #expect(made == 25, "\(replies.map(\.status))")
                let others = replies.filter { $0.status != 201 }
                #expect(
                    others.allSatisfy { $0.status == 202 || ($0.status == 409 && $0["code"] == "corrections_changed") },
                    "\(others.map { "\($0.status) \($0["code"] ?? "")" })")
                #expect(try await approvals.balance(client, manager, customer) == 10_000)
            }
        }
    }
}
