import BackofficePlatform
import Foundation
import PostgresNIO
import Testing

/// Step 3 of a staged operation (the verdict recorded) runs even once its request has been answered,
/// but never without a bound: a connection lost under it answers 503 at once.
@Suite(.serialized)
struct StagedRecordTests {
    @Test(
        """
        a staged operation's verdict whose connection closes under it answers 503 at once, not never: the \
        statement PostgresNIO drops (a primary killed between the call and the record)
        """
    )
    func lostConnectionUnderTheRecordAnswers() async throws {
        try await TestEnvironment.with { env in
            let context = OperationContext(
                principal: env.fixture.principals[.platformAdmin]!, requestID: "staged-record", sourceIP: nil,
                policies: env.policies, transaction: nil)
            // The request's own deadline never passes (manual timers nobody advances).
            let answer = Task {
                try await RequestDeadline.run(within: .seconds(600), timers: ManualTimers()) {
                    try await env.database.runStagedAsSystem(LosesItsConnection(), context: context)
                }
            }
            // At most 20 s: without a watch over step 3 the answer never comes (the test fails, not hangs).
            let outcome = await result(of: answer, within: 20)
            switch outcome {
            case nil: Issue.record("no answer in 20 s")
            case .success(let output): Issue.record("answered as if the verdict were recorded: \(output)")
            case .failure(let error): #expect(error as? DomainError == .unavailable, "\(error)")
            }
            let served = try await env.database.transaction(for: env.fixture.principals[.platformAdmin]!) { _ in 1 }
            #expect(served == 1, "the pool serves on")
        }
    }

    @Test("step 3 commits although its request was answered (503 by its deadline, and cancelled) before it began")
    func theVerdictOutlivesTheRequestsAnswer() async throws {
        let (inner, give) = AsyncStream<String>.makeStream()
        await #expect(throws: DomainError.unavailable) {
            try await RequestDeadline.run(within: .seconds(600), timers: ManualTimers()) {
                RequestDeadline.work?.expire()
                #expect(RequestDeadline.work?.claimCommit() == false, "the answered request's own commit is refused")
                do {
                    give.yield(
                        try await RequestDeadline.runOnItsOwn(within: .seconds(600), timers: ManualTimers()) {
                            try await RequestDeadline.committing { "recorded" }
                        })
                } catch {
                    give.yield("refused: \(error)")
                }
                give.finish()
            }
        }
        var recorded: String?
        for await output in inner { recorded = output }
        #expect(recorded == "recorded")
    }
}

/// A staged operation whose step 3 loses its connection and then sends a statement on it, past the
/// check of `isClosed`: the statement PostgresNIO never answers.
private struct LosesItsConnection: StagedOperation {
    static let action: Action = "orders.checkout"

    func ready() throws {}

    func reserve(in unit: UnitOfWork) async throws -> Audited<Stage<String, String>> {
        .unchanged(.call("reserved"))
    }

    func call(_ reservation: String) async throws -> String { "verdict" }

    func record(_ verdict: String, for reservation: String, in unit: UnitOfWork) async throws -> Audited<String> {
        let connection = unit.connection
        try await connection.close()
        _ = try await Task.detached { try await connection.query("SELECT 1", logger: testLogger) }.value
        return .unchanged(verdict)
    }
}
