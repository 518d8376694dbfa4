import Crypto
import Foundation
import PostgresNIO

/// A mail a change sends: queued in the change's own transaction (`Outbox.queue`), so it goes
/// out exactly when the change commits, and delivered later by `OutboxDelivery`.
package struct QueuedMail: Sendable {
    /// What the mail is, as the outbox's `kind` column keeps it; each kind is declared by the
    /// part that sends it (an extension of `Kind`) and written by the mail templates.
    package struct Kind: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }
        package init(stringLiteral value: String) { rawValue = value }
    }
    package let kind: Kind
    package let tenantID: UUID
    package let recipient: String
    package var operatorID: UUID? = nil
    package var reference: UUID? = nil
    /// What the template shows besides the link: never a secret.
    package var fields: [String: String] = [:]

    package init(
        kind: Kind, tenantID: UUID, recipient: String, operatorID: UUID? = nil, reference: UUID? = nil,
        fields: [String: String] = [:]
    ) {
        (self.kind, self.tenantID, self.recipient, self.operatorID, self.reference, self.fields) = (
            kind, tenantID, recipient, operatorID, reference, fields
        )
    }
}

/// The transactional outbox (table `outbox`).
package enum Outbox {
    /// Queues `mail` in `unit`'s transaction; the audit event that records it (`mail.queued`, on
    /// the message, with its kind and masked recipient: never a link).
    package static func queue(_ mail: QueuedMail, in unit: UnitOfWork) async throws -> AuditRecord {
        let id = unit.newID()
        let fields = String(decoding: try JSONEncoder().encode(mail.fields), as: UTF8.self)
        try await unit.execute(
            """
            INSERT INTO outbox (id, tenant_id, kind, recipient, operator_id, reference, fields, message_id,
                created_at, due_at)
            VALUES (\(id), \(mail.tenantID), \(mail.kind.rawValue), \(mail.recipient), \(mail.operatorID),
                \(mail.reference), \(fields)::jsonb,
                    \(messageID(id)), \(unit.now), \(unit.now))
            """)
        struct Queued: Encodable { let kind: String, to: String }
        return AuditRecord(
            action: "mail.queued", tenantID: mail.tenantID, targetType: "mail", targetID: id.text,
            reason: mail.kind.rawValue, before: nil,
            after: try AuditRecord.json(Queued(kind: mail.kind.rawValue, to: MaskedEmail.text(mail.recipient))))
    }

    /// The message's stable `Message-ID` (the same at every attempt).
    package static func messageID(_ id: UUID) -> String { "\(id.text)@backoffice.healthtrack" }
}
