import Foundation

/// A change whose middle step is a call to another system (the payment provider). No transaction
/// may wait on a network call — it would hold row locks and a pooled connection as long as the
/// other system takes — so the change runs in three steps, each through the runners (policy,
/// transaction, audit):
/// 1. `reserve`: one transaction makes the change up to the call and says what the call needs
///    (`.call(reservation)`), or that none is needed (`.done(output)`);
/// 2. `call`: the call, with no transaction open and no connection held;
/// 3. `record`: a second transaction records the call's verdict. It runs even when the request
///    has been answered meanwhile (by its deadline), within a deadline of its own, and a connection
///    lost under it answers 503 at once (`RequestDeadline.runOnItsOwn`): the verdict is then left
///    to the retry or the reconciliation, as after a crash.
///
/// A failure between 1 and 3 (no verdict, a crash) leaves the reservation recorded: the same
/// request sent again (same Idempotency-Key) calls again — the other system deduplicates by the
/// key the reservation carries — and records the verdict; a reconciliation finds what is left.
/// `Idempotency.runStaged` runs it.
package protocol StagedOperation: UseCase {
    associatedtype Output  // restated so conformers infer it
    /// What step 1 leaves for the call. Stored with the request's idempotency record until the
    /// verdict is recorded, so it never holds a secret.
    associatedtype Reservation: Codable & Sendable
    /// What the call answered.
    associatedtype Verdict: Sendable

    /// Refuses the change before anything is written (the other system is known to be down).
    func ready() throws
    func reserve(in unit: UnitOfWork) async throws -> Audited<Stage<Reservation, Output>>
    func call(_ reservation: Reservation) async throws -> Verdict
    func record(_ verdict: Verdict, for reservation: Reservation, in unit: UnitOfWork) async throws -> Audited<Output>
}

/// Where step 1 of a staged operation left it.
package enum Stage<Reservation: Sendable, Output: Sendable>: Sendable {
    /// Nothing to call: the change is complete.
    case done(Output)
    /// The call is to be made with this reservation.
    case call(Reservation)
}

extension Audited {
    /// The same events with the output transformed.
    package func map<T: Sendable>(_ transform: (Output) -> T) -> Audited<T> {
        guard let first = events.first else { return .unchanged(transform(output)) }
        return Audited<T>(transform(output), event: first, more: Array(events.dropFirst()))
    }
}

/// Step 1 of a staged operation, run as the audited operation it is (same policy action).
package struct ReserveStage<Staged: StagedOperation>: AuditedOperation {
    package static var action: Action { Staged.action }
    package let staged: Staged

    package func perform(in unit: UnitOfWork) async throws -> Audited<Stage<Staged.Reservation, Staged.Output>> {
        try await staged.reserve(in: unit)
    }
}

/// Step 3 of a staged operation, run as the audited operation it is (same policy action).
package struct RecordStage<Staged: StagedOperation>: AuditedOperation {
    package static var action: Action { Staged.action }
    package let staged: Staged
    package let verdict: Staged.Verdict
    package let reservation: Staged.Reservation

    package func perform(in unit: UnitOfWork) async throws -> Audited<Staged.Output> {
        try await staged.record(verdict, for: reservation, in: unit)
    }
}

extension Database {
    /// Checks the policy and runs a staged operation's three steps without an Idempotency-Key (a
    /// tool's or a test's call: a failure between the steps leaves the reservation to
    /// reconciliation). Requests go through `Idempotency.runStaged`.
    package func runStaged<Operation: StagedOperation>(_ operation: Operation, context: OperationContext) async throws
        -> Operation.Output
    {
        try context.permit(Operation.self)
        return try await stages(operation) {
            try await run($0, context: context)
        } record: {
            try await run($0, context: context)
        }
    }

    /// Runs a staged operation the system performs on its own (demo data): no policy check.
    package func runStagedAsSystem<Operation: StagedOperation>(_ operation: Operation, context: OperationContext)
        async throws
        -> Operation.Output
    {
        try await stages(operation) {
            try await runAsSystem($0, context: context)
        } record: {
            try await runAsSystem($0, context: context)
        }
    }

    private func stages<Operation: StagedOperation>(
        _ operation: Operation,
        reserve: (ReserveStage<Operation>) async throws -> Stage<Operation.Reservation, Operation.Output>,
        record: @escaping @Sendable (RecordStage<Operation>) async throws -> Operation.Output
    ) async throws -> Operation.Output {
        try operation.ready()
        switch try await reserve(ReserveStage(staged: operation)) {
        case .done(let output): return output
        case .call(let reservation):
            let verdict = try await operation.call(reservation)
            // recorded even once the request has been answered, within a deadline of its own
            return try await recordingOnItsOwn {
                try await record(RecordStage(staged: operation, verdict: verdict, reservation: reservation))
            }
        }
    }
}

extension Database {
    /// Runs a staged operation's step 3 (`RequestDeadline.runOnItsOwn`): not bound to the request's
    /// answer, but within a request's deadline of its own and with its connection watched. Outside
    /// any request (a tool, a background service), the same bound applies.
    package func recordingOnItsOwn<T: Sendable>(_ record: @escaping @Sendable () async throws -> T) async throws -> T {
        try await RequestDeadline.runOnItsOwn(within: limits.requestDeadline, timers: limits.timers, record)
    }
}
