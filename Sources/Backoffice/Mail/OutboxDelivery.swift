import BackofficePlatform
import Crypto
import Foundation
import Logging
import ServiceLifecycle

/// Where queued mail goes: an SMTP relay, `.eml` files in a folder (`backoffice dev`), or only a
/// log line (`BACKOFFICE_MAIL=log`: nothing is sent).
package protocol MailTransport: Sendable {
    /// Delivers `message`; a thrown error leaves it queued for another attempt.
    func deliver(_ message: MailMessage) async throws
}

/// Sends over SMTP (`BACKOFFICE_SMTP_URL`).
package struct SMTPMailTransport: MailTransport {
    let client: SMTPClient
    package init(_ settings: SMTPSettings) { client = SMTPClient(settings: settings) }
    package func deliver(_ message: MailMessage) async throws { try await client.send(message) }
}

/// Writes each message as `<Message-ID>.eml` (mode 0600) in `folder` (0700) and tells `announce`
/// its path: `backoffice dev`'s mail, opened from `.backoffice/mail/`. A message written again
/// (a retry) replaces its own file.
package struct FileMailTransport: MailTransport {
    let folder: URL
    let announce: @Sendable (String) -> Void

    package init(folder: URL, announce: @escaping @Sendable (String) -> Void) {
        (self.folder, self.announce) = (folder, announce)
    }

    package func deliver(_ message: MailMessage) async throws {
        try PrivateFile.directory(folder.path)
        let name = message.messageID.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "_" }
        let path = folder.appendingPathComponent(String(name) + ".eml").path
        try PrivateFile.replace(path, contents: Data(try message.rendered().utf8))
        announce(path)
    }
}

/// Sends nothing: logs that a message would have gone (to whom, masked, and its subject; never
/// its body, which may hold a link). For a service run without mail on purpose.
package struct LogMailTransport: MailTransport {
    let logger: Logger
    package init(logger: Logger) { self.logger = logger }
    package func deliver(_ message: MailMessage) async throws {
        logger.notice(
            "mail not sent (BACKOFFICE_MAIL=log)",
            metadata: [
                "to": .string(MaskedEmail.text(message.to)), "subject": .string(message.subject),
                "message_id": .string(message.messageID),
            ])
    }
}

/// How the service sends mail.
package struct MailSettings: Sendable {
    /// Where mail goes; nil queues it without delivering (a test server that delivers by hand).
    package var transport: (any MailTransport)?
    /// The sender's address.
    package var from = "backoffice@healthtrack.example"
    /// The console's public address, the origin of the links mail carries
    /// (`BACKOFFICE_PUBLIC_URL`): never taken from a request's Host, which a caller chooses.
    package var publicURL = "http://127.0.0.1:8080"
    /// How often the outbox is read when it was empty.
    package var interval: Duration = .seconds(1)
    /// How long a claimed message is left to its sender before another attempt takes it: longer
    /// than one send may take (the SMTP client's 10 s to connect and 30 s for the exchange).
    package var claimSeconds = 60
    /// The key of unsubscribe links when the server has no `BACKOFFICE_SECOND_FACTOR_KEY` (a test
    /// server): one per settings, so the delivery and the console that checks the links share it.
    package var linkKey = SymmetricKey(size: .bits256)

    package init() {}
}

/// Delivers the outbox: every `interval`, claims the messages due one at a time (oldest first,
/// `SKIP LOCKED`, so several processes share the work), sends it through the transport, and marks
/// it sent.
///
/// Guarantees: a message is sent at least once and always under its own `Message-ID` (the
/// receiver can drop a repeat): a process that dies between sending and marking leaves a claim
/// that lapses after `claimSeconds`, and the message is sent again. A claim is taken just before
/// its one send and outlasts it (`claimSeconds` > the transport's deadline), so however slowly a
/// run of sends goes, no other process takes a message its sender still holds. A failed attempt is retried
/// after 1, 2, 4 … seconds, at most a minute apart, for as long as it fails (an SMTP server down
/// for an hour loses nothing); a message the server refuses for good (a 5xx reply) is set aside
/// (`gave_up_at`) and logged. Stops on graceful shutdown.
package struct OutboxDelivery: Service {
    let database: Database
    let policies: PolicySet
    let settings: MailSettings
    let transport: any MailTransport
    let links: InvitationLinks
    let unsubscribeLinks: UnsubscribeLinks

    package init(
        database: Database, policies: PolicySet, settings: MailSettings, transport: any MailTransport,
        links: InvitationLinks, unsubscribeLinks: UnsubscribeLinks
    ) {
        (self.database, self.policies, self.settings, self.transport, self.links, self.unsubscribeLinks) = (
            database, policies, settings, transport, links, unsubscribeLinks
        )
    }

    package func run() async throws {
        await drainEvery(settings.interval, logger: database.logger, failure: "mail delivery failed") {
            try await deliverDue()
        }
    }

    /// One message claimed for sending.
    struct Claimed: Sendable {
        let id: UUID, kind: QueuedMail.Kind, recipient: String, operatorID: UUID?, reference: UUID?,
            fields: [String: String], messageID: String
        let attempts: Int, createdAt: Date
    }

    /// Claims and tries, one at a time, up to `limit` due messages; how many were claimed.
    @discardableResult
    package func deliverDue(limit: Int = 20) async throws -> Int {
        var count = 0
        while count < limit, let message = try await claimNext() {
            try await deliver(message)
            count += 1
        }
        return count
    }

    /// The oldest due message no one holds, claimed for `claimSeconds`; nil when there is none.
    private func claimNext() async throws -> Claimed? {
        try await system { unit in
            try await unit.all(
                """
                UPDATE outbox o SET claimed_until = \(unit.now.addingTimeInterval(Double(settings.claimSeconds))),
                    attempts = o.attempts + 1
                WHERE o.id IN (SELECT id FROM outbox WHERE sent_at IS NULL AND gave_up_at IS NULL AND due_at <=
                    \(unit.now)
                               AND (claimed_until IS NULL OR claimed_until <= \(unit.now))
                               ORDER BY due_at LIMIT 1 FOR UPDATE SKIP LOCKED)
                RETURNING o.id, o.kind, o.recipient, o.operator_id, o.reference, o.fields::text, o.message_id,
                    o.attempts, o.created_at
                """
            ) { row in
                let (id, kind, recipient, operatorID, reference, fields, messageID, attempts, createdAt) =
                    try row.decode((UUID, String, String, UUID?, UUID?, String, String, Int, Date).self)
                let values = try JSONDecoder().decode([String: String].self, from: Data(fields.utf8))
                return Claimed(
                    id: id, kind: QueuedMail.Kind(rawValue: kind), recipient: recipient, operatorID: operatorID,
                    reference: reference, fields: values, messageID: messageID, attempts: attempts,
                    createdAt: createdAt)
            }.first
        }
    }

    private func deliver(_ claimed: Claimed) async throws {
        do {
            try await transport.deliver(try message(claimed))
            try await system { unit in
                try await unit.execute(
                    """
                    UPDATE outbox SET sent_at = \(unit.now), claimed_until = NULL, last_error = NULL WHERE id = \
                    \(claimed.id)
                    """
                )
            }
            ServiceMetrics.mailSent.increment()
        } catch {
            let permanent =
                (error as? SMTPClient.Failure)?.permanent
                ?? (error is MailMessage.Malformed || error is MailTemplates.Unwritten)
            let detail = String(String(describing: error).prefix(500))
            let wait = Double(min(1 << min(claimed.attempts - 1, 6), 60))
            try await system { unit in
                try await unit.execute(
                    permanent
                        ? """
                        UPDATE outbox SET claimed_until = NULL, gave_up_at = \(unit.now), last_error = \(detail) \
                        WHERE id = \(claimed.id)
                        """
                        : """
                        UPDATE outbox SET claimed_until = NULL, due_at = \(unit.now.addingTimeInterval(wait)),
                            last_error = \(detail)
                        WHERE id = \(claimed.id)
                        """)
            }
            ServiceMetrics.mailFailed.increment()
            database.logger.warning(
                permanent ? "mail refused for good: set aside" : "mail not sent: will retry",
                metadata: [
                    "message_id": .string(claimed.messageID), "attempt": .stringConvertible(claimed.attempts),
                    "error": .string(detail),
                ])
        }
    }

    /// The message `claimed` stands for, its links derived now: an invitation's; a notification's
    /// page and, when it is of a topic its operator chose, its unsubscribe link.
    func message(_ claimed: Claimed) throws -> MailMessage {
        let link =
            claimed.kind == .invitation
            ? claimed.reference.map { settings.publicURL + "/console/invitation?key=" + links.secret(for: $0).value }
            : MailTemplates.notificationPath(claimed.kind, reference: claimed.reference).map { settings.publicURL + $0 }
        let unsubscribe =
            MailPreference.descriptions[claimed.kind.rawValue] == nil
            ? nil
            : claimed.operatorID.map {
                settings.publicURL + unsubscribeLinks.path(operatorID: $0, topic: claimed.kind.rawValue)
            }
        let rendered = try MailTemplates.render(
            claimed.kind, fields: claimed.fields, link: link, unsubscribe: unsubscribe)
        var message = MailMessage(
            messageID: claimed.messageID, from: settings.from, to: claimed.recipient, subject: rendered.subject,
            text: rendered.text, html: rendered.html, date: claimed.createdAt)
        message.unsubscribe = unsubscribe
        return message
    }

    private func system<T: Sendable>(_ body: (UnitOfWork) async throws -> T) async throws -> T {
        let context = OperationContext.system("mail", policies: policies)
        return try await database.transaction(for: Principal.system) { connection in
            try await body(database.unit(connection, context))
        }
    }
}
