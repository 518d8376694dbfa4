import BackofficePlatform
import Foundation
import PostgresNIO

/// A change held for a second person's approval (dual control, `policies/approvals.yaml`): who
/// asked, what (the change itself, as JSON: a `ApprovalGated` holds no secret) and why; decided
/// once, by someone else; past `expiresAt` undecided, it does nothing.
package struct ApprovalRequest: Sendable, Equatable, Identifiable, NewestFirst {
    /// As stored; `expired` is a pending request past `expiresAt` (`status(at:)`).
    package enum Status: String, Sendable, CaseIterable { case pending, approved, rejected, expired }

    package var id: UUID
    package var tenantID: UUID
    /// The held change's policy action (`fitpoints.adjust`).
    package var action: String
    package var targetType: String
    package var targetID: String
    package var summary: String
    /// The change as JSON, performed as it is when approved.
    package var change: String
    package var amount: Int64?
    package var reason: String?
    package var requestedBy: UUID
    package var createdAt: Date
    package var expiresAt: Date
    /// `pending`, `approved` or `rejected`, as stored.
    package var storedStatus: Status
    package var decidedBy: UUID?
    package var decidedAt: Date?
    package var decisionNote: String?

    package var listedAt: Date { createdAt }

    /// Its status at `now`: a pending request past its expiry is `expired`.
    package func status(at now: Date) -> Status {
        storedStatus == .pending && now >= expiresAt ? .expired : storedStatus
    }

    /// Refuses a decision on it at `now`: 409 `approval_decided` once decided, 409
    /// `approval_expired` past its expiry (it stays as it is: an expired request does nothing).
    func requireUndecided(at now: Date) throws {
        switch status(at: now) {
        case .pending: return
        case .expired:
            throw DomainError.conflict(
                code: "approval_expired",
                detail: "The request expired undecided at \(expiresAt.formatted(.iso8601)); it does nothing. Ask again."
            )
        case .approved, .rejected:
            throw DomainError.conflict(
                code: "approval_decided", detail: "The request was \(storedStatus.rawValue) already.")
        }
    }
}

/// How approval requests are stored (`approval_requests`, each tenant's own by row-level security).
extension ApprovalRequest: ListedNewestFirst, ReadByID {
    package static let table = "approval_requests"
    package static let listAction: Action = "approvals.list"
    package static let readAction: Action = "approvals.show"
    package static let columns = """
        id, tenant_id, action, target_type, target_id, summary, change::text, amount, reason, requested_by, \
        created_at, expires_at, status, decided_by, decided_at, decision_note
        """

    package init(row: PostgresRow) throws {
        var cells = RowCells(row, of: "approval request")
        self.init(
            id: try cells.next(), tenantID: try cells.next(), action: try cells.next(), targetType: try cells.next(),
            targetID: try cells.next(), summary: try cells.next(), change: try cells.next(), amount: try cells.next(),
            reason: try cells.next(), requestedBy: try cells.next(), createdAt: try cells.next(),
            expiresAt: try cells.next(), storedStatus: try Status(known: try cells.next(String.self)),
            decidedBy: try cells.next(), decidedAt: try cells.next(), decisionNote: try cells.next())
    }

    /// What an audit event keeps of it (the change's own event records the change).
    struct Snapshot: Encodable {
        let action: String
        let target_type: String
        let target_id: String
        let summary: String
        let amount: Int64?
        let status: String
        let requested_by: String
        let expires_at: Date
        let decided_by: String?
    }

    var snapshot: String {
        get throws {
            try AuditRecord.json(
                Snapshot(
                    action: action, target_type: targetType, target_id: targetID, summary: summary, amount: amount,
                    status: storedStatus.rawValue, requested_by: requestedBy.text, expires_at: expiresAt,
                    decided_by: decidedBy?.text))
        }
    }
}

extension ApprovalRequest {
    /// The held change as the contract shows it: its keys in snake_case and its ids in lower case,
    /// like every answer (the stored JSON is as the change's type encodes itself). Nil when it cannot
    /// be read back.
    func presentedChange(pretty: Bool = false) -> Data? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(change.utf8)) else { return nil }
        return try? JSONSerialization.data(
            withJSONObject: Self.presented(object), options: pretty ? [.prettyPrinted, .sortedKeys] : [.sortedKeys])
    }

    /// The held change's JSON as `presentedChange` shows it, indented, for a person to read.
    var readableChange: String { presentedChange(pretty: true).map { String(decoding: $0, as: UTF8.self) } ?? change }

    private static func presented(_ value: Any) -> Any {
        switch value {
        case let object as [String: Any]:
            Dictionary(uniqueKeysWithValues: object.map { (snakeCase($0.key), presented($0.value)) })
        case let array as [Any]: array.map(presented)
        case let text as String where UUID(uuidString: text) != nil: text.lowercased()
        default: value
        }
    }

    /// `customerID` → `customer_id`, `pointsPerUnit` → `points_per_unit`: a lower-case letter
    /// before a capital starts a word, and a run of capitals is one word.
    private static func snakeCase(_ key: String) -> String {
        var result = ""
        var previous: Character?
        for character in key {
            if character.isUppercase, let previous, previous.isLowercase || previous.isNumber { result.append("_") }
            result.append(Character(character.lowercased()))
            previous = character
        }
        return result
    }
}
