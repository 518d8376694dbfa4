import BackofficeConsole
import BackofficePlatform
import Foundation
import PostgresNIO

/// An invitation as its inviter learns of it: whom it invites, until when, and where it went —
/// emailed to the person (`sentTo`, masked), or, when a platform admin asked, the link itself.
package struct Invitation: Sendable {
    package let operatorID: UUID
    package let email: String
    package let expiresAt: Date
    /// The link's secret, only when it is shown instead of emailed: in this value and the one
    /// response or page that shows it, nowhere else (the database keeps its SHA-256).
    package let secret: SessionSecret?
    /// The masked address the link was emailed to (`a…@green-grocer.example`), when emailed.
    package let sentTo: String?

    /// The console address the person opens, when the link is shown. The secret is in the query
    /// string, which request logs leave out (they record the path).
    package var path: String? { secret.map { "/console/invitation?key=\($0.value)" } }
}

/// Invites a person operator to the console (`operators.invite`): a one-time link, valid 24
/// hours, where it sets its password. A new invitation supersedes the operator's unused ones. A
/// disabled operator or a service principal is refused.
///
/// The link reaches only its owner: it is emailed to the operator's address through the outbox
/// (`mail.queued`, in the same transaction), and the inviter learns only where it went. Only a
/// platform admin may have it shown instead (`showLink`: for a person without working email),
/// audited with the reason `shown`; anyone else asking is 403.
package struct InviteOperator: AuditedOperation {
    package static let action: Action = "operators.invite"
    let operatorID: UUID
    let links: InvitationLinks
    let showLink: Bool

    /// How long a link is valid.
    static let lifetime: TimeInterval = 24 * 3600

    package init(operatorID: UUID, links: InvitationLinks, showLink: Bool = false) {
        (self.operatorID, self.links, self.showLink) = (operatorID, links, showLink)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Invitation> {
        let target: Operator = try await unit.byID(
            "operators", operatorID, forUpdate: true, notFound: "Operator \(operatorID.text)")
        guard target.kind == "person" else {
            throw DomainError.invalid([
                .init(field: "operator_id", code: "not_a_person", message: "a service principal has no console sign-in")
            ])
        }
        guard target.status == "active" else {
            throw DomainError.invalidTransition("A disabled operator cannot be invited.", current: target.status)
        }
        if showLink, unit.principal.role != Role.platformAdmin.rawValue {
            throw DomainError.forbiddenTarget(
                Self.action,
                detail:
                    "Only a platform admin may have a sign-in link shown; everyone else's goes to the person by email.")
        }
        try await unit.execute(
            """
            UPDATE operator_invitations SET superseded_at = \(unit.now)
            WHERE tenant_id = \(target.tenantID) AND operator_id = \(operatorID) AND used_at IS NULL AND superseded_at
                IS NULL
            """)
        let id = unit.newID()
        let secret = links.secret(for: id)
        let expiresAt = unit.now.addingTimeInterval(Self.lifetime)
        try await unit.execute(
            """
            INSERT INTO operator_invitations (id, tenant_id, operator_id, secret_hash, created_by, created_at,
                expires_at)
            VALUES (\(id), \(target.tenantID), \(operatorID), \(ByteBuffer(bytes: secret.hash)),
                \(unit.principal.operatorID),
                    \(unit.now), \(expiresAt))
            """)
        let expires = ISO8601DateFormatter().string(from: expiresAt)
        var more: [AuditRecord] = []
        if !showLink {
            let tenant = try await unit.first("SELECT name FROM tenants WHERE id = \(target.tenantID)") {
                try $0.decode(String.self)
            }
            var fields = ["role": target.role.rawValue, "expires_at": expires]
            if target.tenantID != platformTenantID, let tenant { fields["tenant"] = tenant }
            more.append(
                try await Outbox.queue(
                    QueuedMail(
                        kind: .invitation, tenantID: target.tenantID, recipient: target.email, operatorID: operatorID,
                        reference: id, fields: fields),
                    in: unit))
        }
        let invitation = Invitation(
            operatorID: operatorID, email: target.email, expiresAt: expiresAt, secret: showLink ? secret : nil,
            sentTo: showLink ? nil : MaskedEmail.text(target.email))
        return Audited(
            invitation,
            event: AuditRecord(
                action: Self.action, tenantID: target.tenantID, targetType: "operator", targetID: operatorID.text,
                reason: showLink ? "shown" : "emailed",
                before: nil, after: try AuditRecord.json(["expires_at": expires])),
            more: more)
    }
}

/// Whom an invitation link's secret invites (read before anyone is signed in); nil when the
/// link is unknown, used, superseded, expired, or its operator disabled.
package struct OpenInvitation: Query {
    package static let action: Action = "operators.invitation_accepted"
    package struct Found: Sendable {
        package let invitationID: UUID
        package let tenantID: UUID
        package let operatorID: UUID
        package let email: String
        package let role: Role
    }
    let secretHash: [UInt8]

    package init(secretHash: [UInt8]) { self.secretHash = secretHash }

    package func read(in unit: UnitOfWork) async throws -> Found? {
        try await unit.first(
            """
            SELECT invitation_id, tenant_id, operator_id, email, role FROM \
            operator_invitation(\(ByteBuffer(bytes: secretHash)), \(unit.now))
            """
        ) { row in
            let (id, tenant, operatorID, email, role) = try row.decode((UUID, UUID, UUID, String, String).self)
            return Found(
                invitationID: id, tenantID: tenant, operatorID: operatorID, email: email, role: try Role(known: role))
        }
    }
}

/// Sets the invited operator's password from its link (`operators.invitation_accepted`, with the
/// operator as actor) and uses the link up, in one transaction; a link no longer open is 404.
/// Run by the system: the person is not signed in.
package struct AcceptInvitation: AuditedOperation {
    package static let action: Action = "operators.invitation_accepted"
    let secretHash: [UInt8]
    let passwordHash: String

    /// `passwordHash` is `PasswordRules.hash` of a password that passed `PasswordRules.check`.
    package init(secretHash: [UInt8], passwordHash: String) {
        (self.secretHash, self.passwordHash) = (secretHash, passwordHash)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<String> {
        guard let invitation = try await OpenInvitation(secretHash: secretHash).read(in: unit) else {
            throw DomainError.notFound("Invitation")
        }
        let used = try await unit.first(
            """
            UPDATE operator_invitations SET used_at = \(unit.now) WHERE id = \(invitation.invitationID) AND \
            used_at IS NULL RETURNING 1
            """
        ) { try $0.decode(Int32.self) }
        guard used != nil else { throw DomainError.notFound("Invitation") }
        let password = try await SetOperatorPassword(operatorID: invitation.operatorID, passwordHash: passwordHash)
            .perform(in: unit)
        let actor = Principal(
            operatorID: invitation.operatorID, role: invitation.role, tenantID: invitation.tenantID, tokenID: nil)
        var accepted = AuditRecord(
            action: Self.action, tenantID: invitation.tenantID, targetType: "operator",
            targetID: invitation.operatorID.text, reason: nil,
            before: nil, after: nil)
        accepted.actor = actor
        let set = password.events.map { event -> AuditRecord in
            var event = event
            event.actor = actor
            return event
        }
        return Audited(invitation.email, event: accepted, more: set)
    }
}

extension QueuedMail.Kind {
    /// An invitation or a new sign-in link: `reference` is the invitation's id.
    static let invitation: Self = "invitation"
}
