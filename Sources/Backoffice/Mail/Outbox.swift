import Crypto
import Foundation
import PostgresNIO
import BackofficePlatform

/// A mail a change sends: queued in the change's own transaction (`Outbox.queue`), so it goes
/// out exactly when the change commits, and delivered later by `OutboxDelivery`.
package struct QueuedMail: Sendable {
    package enum Kind: String, Sendable, CaseIterable {
        /// An invitation or a new sign-in link: `reference` is the invitation's id.
        case invitation
        /// Too many failed sign-ins to the operator's account (its sign-ins are slowed).
        case lockoutNotice = "lockout_notice"
        /// A shop application's decision, to its contact email.
        case shopDecision = "shop_decision"
    }
    let kind: Kind
    let tenantID: UUID
    let recipient: String
    var operatorID: UUID? = nil
    var reference: UUID? = nil
    /// What the template shows besides the link: never a secret.
    var fields: [String: String] = [:]
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
    static func messageID(_ id: UUID) -> String { "\(id.text)@backoffice.healthtrack" }
}

/// The secrets of invitation links: HMAC-SHA256 of the invitation's id under a key of the
/// server's (derived from `BACKOFFICE_SECOND_FACTOR_KEY`). The database keeps only the secret's
/// SHA-256 and the outbox only the invitation's id, so the link exists in the message that
/// delivers it (or the one response a platform admin asked to show it in) and nowhere else;
/// a retry sends the same link.
package struct InvitationLinks: Sendable {
    private let key: SymmetricKey

    package init(key: SymmetricKey) { self.key = key }

    /// The links of a server with `secondFactorKey` (nil, a test server: a key of this process).
    package init(secondFactorKey: SecondFactorKey?) {
        self.init(key: secondFactorKey?.derived(for: "invitation-links") ?? SymmetricKey(size: .bits256))
    }

    /// The secret of `invitation`'s link.
    package func secret(for invitation: UUID) -> SessionSecret {
        let code = HMAC<SHA256>.authenticationCode(for: Data("invitation:\(invitation.text)".utf8), using: key)
        return SessionSecret(value: Base64URL.encode(Data(code)))
    }
}
