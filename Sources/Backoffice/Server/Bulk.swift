import BackofficeAPI
import BackofficePlatform
import Foundation

/// What one item of a bulk change came to: done (its state after), would be done (a dry run), or
/// refused (the error the same change alone answers with: a `DomainError` or a `PaymentRefusal`).
package struct BulkOutcome<State: Sendable>: Sendable {
    package enum Kind: String, Sendable { case done, wouldDo = "would_do", refused }
    package let id: UUID
    package let kind: Kind
    package var state: State? = nil
    package var refusal: (any Error)? = nil
}

/// The template of a bulk change: at most 500 items, each once; each its own audited change, made
/// by the same use case as the change alone, so a refusal of one leaves the others done (not all or
/// nothing); the outcomes in the order asked.
enum Bulk {
    static let limit = 500

    /// 1 to `limit` ids in `field`, each once.
    static func check(_ ids: [UUID], field: String, into validation: inout Validation) {
        validation.require((1...limit).contains(ids.count), field, "out_of_range", "1 to \(limit) items")
        validation.require(Set(ids).count == ids.count, field, "duplicate_item", "each item at most once")
    }

    /// `change` made (or, `as: .wouldDo`, a dry run's check of it) for each id in turn; a refusal is
    /// that id's outcome, and the next id goes on.
    static func each<State: Sendable>(
        _ ids: [UUID], as kind: BulkOutcome<State>.Kind = .done, _ change: (UUID) async throws -> State
    ) async throws -> [BulkOutcome<State>] {
        var outcomes: [BulkOutcome<State>] = []
        for id in ids {
            do {
                outcomes.append(BulkOutcome(id: id, kind: kind, state: try await change(id)))
            } catch let error where error is DomainError || error is PaymentRefusal {
                outcomes.append(BulkOutcome(id: id, kind: .refused, refusal: error))
            }
        }
        return outcomes
    }
}

extension Components.Schemas.Problem {
    /// The problem a bulk outcome's refusal answers (as the change alone would); nil for none.
    init?(refusal: (any Error)?) {
        guard let problem = refusal.flatMap(Problem.describing) else { return nil }
        self.init(
            _type: "https://healthtrack.example/problems/\(problem.code)", title: problem.title,
            status: problem.status, detail: problem.detail, code: problem.code, currentState: problem.currentState,
            errors: problem.errors.isEmpty
                ? nil : problem.errors.map { .init(field: $0.field, code: $0.code, message: $0.message) })
    }
}

/// What a bulk answer says of an item after its change: its state's name (`archived`, `locked`).
protocol BulkState: Sendable {
    var stateName: String { get }
}

extension BulkState where Self: RawRepresentable, RawValue == String {
    var stateName: String { rawValue }
}

extension Customer: BulkState {
    var stateName: String { status.rawValue }
}

extension Good: BulkState {
    var stateName: String { status.rawValue }
}

/// A bulk change as the API runs it: a dry run or not, and the outcomes of running it.
protocol BulkChange: Sendable {
    associatedtype State: BulkState
    var dryRun: Bool { get }
    func run(_ database: Database, context: OperationContext) async throws -> [BulkOutcome<State>]
}

extension APIHandler {
    /// The answer of `bulk` run for the current request: its counts and each item's outcome.
    func bulkResult(_ bulk: some BulkChange) async throws -> Components.Schemas.BulkResult {
        try .init(bulk.dryRun, try await bulk.run(database, context: try context()))
    }
}

/// The ids of a bulk request's `field`, each parsed (400 naming the field for one that is not a UUID).
func parseIDs(_ texts: [String], _ field: String) throws -> [UUID] {
    try texts.map { try parseID($0, field) }
}

extension Components.Schemas.BulkResult {
    /// A bulk change's answer: its counts and each item's outcome, in the order asked.
    init<State: BulkState>(_ dryRun: Bool, _ outcomes: [BulkOutcome<State>]) throws {
        let refused = outcomes.count { $0.kind == .refused }
        self.init(
            dryRun: dryRun, done: outcomes.count - refused, refused: refused,
            outcomes: try outcomes.map { outcome in
                .init(
                    id: outcome.id.text, outcome: try .init(known: outcome.kind.rawValue),
                    state: outcome.state?.stateName, problem: .init(refusal: outcome.refusal))
            })
    }
}
