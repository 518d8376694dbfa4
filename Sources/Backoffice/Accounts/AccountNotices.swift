import BackofficePlatform
import Foundation
import PostgresNIO

/// A notice a manager sent to one customer's account: what the app shows the customer (subject,
/// body, when). Why it was sent is its audit event's reason.
package struct AccountNotice: Sendable, Equatable, NewestFirst {
    package var id: UUID
    package var customerID: UUID
    package var subject: String
    package var body: String
    package var sentAt: Date
    package var listedAt: Date { sentAt }
}

extension AccountNotice: RowDecodable {
    package static let columns = "id, customer_id, subject, body, created_at"

    package init(row: PostgresRow) throws {
        let (id, customerID, subject, body, sentAt) = try row.decode((UUID, UUID, String, String, Date).self)
        self.init(id: id, customerID: customerID, subject: subject, body: body, sentAt: sentAt)
    }
}

/// What a notice says: a subject of one line (at most 200 characters) and a body (at most 5,000;
/// line breaks and tabs allowed), each trimmed; neither holds a control character or a
/// bidirectional override or isolate (which would reorder the text around it).
package struct NoticeText: Sendable, Equatable {
    package let subject: String
    package let body: String

    /// The trimmed text.
    /// - Throws: 422 `validation_failed` naming `subject` or `body`.
    package init(subject: String?, body: String?) throws {
        var validation = Validation()
        Self.check(subject: subject, body: body, into: &validation)
        try validation.check()
        (self.subject, self.body) = (Self.trimmed(subject), Self.trimmed(body))
    }

    /// Records in `validation` what is wrong with `subject` and `body`, if anything.
    static func check(subject: String?, body: String?, into validation: inout Validation) {
        validation.text(subject, "subject", max: 200)
        validation.text(body, "body", max: 5000)
        validation.require(
            !trimmed(subject).unicodeScalars.contains { refused($0, lineBreaks: false) }, "subject",
            "control_character", "must be one line without control characters")
        validation.require(
            !trimmed(body).unicodeScalars.contains { refused($0, lineBreaks: true) }, "body", "control_character",
            "must not hold control characters other than line breaks and tabs")
    }

    /// A control character, a bidirectional override or isolate, and, unless `lineBreaks`, a line
    /// break of any kind (U+2028 and U+2029 included).
    private static func refused(_ scalar: Unicode.Scalar, lineBreaks: Bool) -> Bool {
        switch scalar.properties.generalCategory {
        case .lineSeparator, .paragraphSeparator: return !lineBreaks
        case .control: return !(lineBreaks && "\n\r\t".unicodeScalars.contains(scalar))
        default: return (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
        }
    }

    private static func trimmed(_ text: String?) -> String {
        (text ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// A notice sent (or, in a bulk's dry run, that would be) and the account it went to.
package struct SentNotice: Sendable, BulkState {
    package let account: Customer
    /// Nil in a dry run.
    package let notice: AccountNotice?
    var stateName: String { account.status.rawValue }
}

/// A manager sends a notice to one account (`accounts.message`): an active or locked account
/// (a deleted one is 409 `invalid_transition`; an unknown one 404) gets it, read by the app
/// (`ListAccountNotices`). Audited with the reason, and the notice's id and subject (not its body).
/// Under an Idempotency-Key, an account sent a notice under the same key by the same sender gets no
/// second one (409 `sent_already`; another notice under that key: 409 `idempotency_key_reused`).
/// The account's row is locked, so a delete committing meanwhile is seen.
package struct SendAccountNotice: AuditedOperation {
    package static let action: Action = "accounts.message"
    let customerID: UUID
    let text: NoticeText
    let reason: String?
    var idempotencyKey: String? = nil

    package func perform(in unit: UnitOfWork) async throws -> Audited<SentNotice> {
        let reason = try requireReason(reason)
        let account = try await Self.messageable(customerID, forUpdate: true, in: unit)
        let requestKey = Self.requestKey(idempotencyKey, in: unit)
        let id = unit.newID()
        let inserted = try await unit.first(
            """
            INSERT INTO account_notices (id, customer_id, subject, body, sent_by, request_key, created_at)
            VALUES (\(id), \(customerID), \(text.subject), \(text.body), \(unit.principal.operatorID),
                \(requestKey), \(unit.now))
            ON CONFLICT (customer_id, request_key) WHERE request_key IS NOT NULL DO NOTHING
            RETURNING id
            """, { try $0.decode(UUID.self) })
        if inserted == nil {
            try await Self.refuseRepeat(customerID, requestKey: requestKey, text: text, in: unit)
            throw DomainError.inconsistent("a notice under this key was neither sent nor found")
        }
        struct Sent: Encodable { let notice_id: String, subject: String }
        let notice = AccountNotice(
            id: id, customerID: customerID, subject: text.subject, body: text.body, sentAt: unit.now)
        return Audited(
            SentNotice(account: account, notice: notice),
            event: AuditRecord(
                action: Self.action, tenantID: platformTenantID, targetType: "customer", targetID: customerID.text,
                reason: reason, before: nil,
                after: try AuditRecord.json(Sent(notice_id: id.text, subject: text.subject))))
    }

    /// The sender's Idempotency-Key scoped to the sender and hashed (the key itself is not kept).
    static func requestKey(_ idempotencyKey: String?, in unit: UnitOfWork) -> String? {
        idempotencyKey.map(unit.principal.scopedKeyHash)
    }

    /// Nothing when no notice went to the account under `requestKey`.
    /// - Throws: 409 `sent_already` when this notice did, `idempotency_key_reused` when another did.
    static func refuseRepeat(_ customerID: UUID, requestKey: String?, text: NoticeText, in unit: UnitOfWork)
        async throws
    {
        guard let requestKey else { return }
        let same = try await unit.first(
            """
            SELECT subject = \(text.subject) AND body = \(text.body) FROM account_notices
            WHERE customer_id = \(customerID) AND request_key = \(requestKey)
            """, { try $0.decode(Bool.self) })
        guard let same else { return }
        guard same else { throw DomainError.idempotencyKeyReused }
        throw DomainError.conflict(
            code: "sent_already", detail: "This account was sent this notice under the same Idempotency-Key.")
    }

    /// The account, when a notice may be sent to it; with `forUpdate`, locked until the unit of work ends.
    /// - Throws: 404 for an unknown account, 409 `invalid_transition` for a deleted one.
    static func messageable(_ id: UUID, forUpdate: Bool = false, in unit: UnitOfWork) async throws -> Customer {
        let account = try await Customer.fetch(id, forUpdate: forUpdate, in: unit)
        guard account.status != .deleted else {
            throw DomainError.invalidTransition(
                "Cannot message an account that is deleted.", current: account.status.rawValue)
        }
        return account
    }
}

/// A customer's notices, newest first (`accounts.notices`: the app's read, and managers'), after
/// the keyset of `after`. An unknown customer is 404.
package struct ListAccountNotices: Query {
    package static let action: Action = "accounts.notices"
    let customerID: UUID
    let after: (createdAt: Date, id: UUID)?
    let limit: Int

    package func read(in unit: UnitOfWork) async throws -> [AccountNotice] {
        try await Customer.requireExisting(customerID, in: unit)
        return try await unit.newestFirst(
            "account_notices", owner: ("customer_id", customerID), after: after, limit: limit)
    }
}
