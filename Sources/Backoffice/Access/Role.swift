import BackofficeAPI
import Foundation

/// The platform tenant: platform roles act for it, and a transaction acting for it sees every tenant.
package let platformTenantID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

/// A role (see ARCHITECTURE.md, "Roles"). `policies/access.yaml` says what each may do.
package enum Role: String, CaseIterable, Sendable, Codable {
    case platformAdmin = "platform_admin"
    case backendManager = "backend_manager"
    case auditor
    case partnerAdmin = "partner_admin"
    case partnerStaff = "partner_staff"
    case appService = "app_service"

    /// Whether the role acts for the platform (all tenants) or for one partner tenant.
    package var isPlatform: Bool {
        switch self {
        case .platformAdmin, .backendManager, .auditor, .appService: true
        case .partnerAdmin, .partnerStaff: false
        }
    }

    /// Whether principals with this role are people or services.
    package var kind: String { self == .appService ? "service" : "person" }
}

/// A value the code does not know, read from the database (a newer schema, or corruption) or
/// mapped from the contract: the read fails (500, logged) instead of guessing a default.
package struct UnknownValue: Error, CustomStringConvertible {
    package let type: String
    package let value: String
    package var description: String { "unknown \(type) '\(value)'" }
}

extension RawRepresentable where RawValue == String {
    /// The case named `known`; anything else throws `UnknownValue`, never a silent default.
    package init(known: String) throws {
        guard let value = Self(rawValue: known) else { throw UnknownValue(type: "\(Self.self)", value: known) }
        self = value
    }
}

/// A permission, and the `action` of the audit event its change records. The contract is the
/// one registry of actions: every operation of `openapi.yaml` names its action (`x-action`), and
/// `policies/access.yaml` may grant only those. A use case names its action with a literal
/// (`static let action: Action = "operators.read"`); a literal the contract does not declare stops
/// a debug build at once.
package struct Action: RawRepresentable, Hashable, Sendable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
    package let rawValue: String

    /// A declared action; nil for a name the contract does not declare.
    package init?(rawValue: String) {
        guard Self.allCases.contains(where: { $0.rawValue == rawValue }) else { return nil }
        self.rawValue = rawValue
    }

    package init(stringLiteral value: String) {
        assert(Self.declared.contains(value), "action '\(value)' is not declared by any operation of openapi.yaml (x-action)")
        rawValue = value
    }

    private init(declared: String) { rawValue = declared }

    package var description: String { rawValue }

    /// Every action the contract declares, sorted.
    package static let allCases: [Action] = declared.sorted().map(Action.init(declared:))

    /// The `x-action` names of the bundled `openapi.yaml`.
    private static let declared: Set<String> = {
        guard let yaml = OpenAPIDocument.yaml.map({ String(decoding: $0, as: UTF8.self) }) else { return [] }
        var names = Set<String>()
        for line in yaml.split(separator: "\n") {
            let text = line.trimmingCharacters(in: .whitespaces)
            guard text.hasPrefix("x-action:") else { continue }
            names.insert(
                text.dropFirst("x-action:".count).trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"'")))
        }
        return names.union(sessionEvents.map(\.rawValue))
    }()

    /// The console's sign-in events, and mail queued by a change (`mail.queued`), which no
    /// operation of the contract makes: the system records them as operators sign in and out
    /// (`ConsoleSignIn`) and as changes send mail (`Outbox`), and no role is granted them.
    package static let sessionEvents: Set<Action> = Set(
        [
            "sessions.sign_in", "sessions.sign_in_failed", "sessions.locked_out", "sessions.sign_out", "sessions.sign_out_everywhere",
            "sessions.password_accepted", "operators.set_password", "operators.second_factor_enrolled", "operators.invitation_accepted",
            "mail.queued",
        ].map(Action.init(declared:)))
}

/// Who makes a change: an authenticated principal, or the system itself (timed lock expiry,
/// automatic lockout, bootstrap).
package struct Principal: Sendable, Equatable {
    package let operatorID: UUID?
    package let role: String
    package let tenantID: UUID
    /// The API token the principal authenticated with (nil in the console and for the system).
    package let tokenID: UUID?
    /// The console session the principal is signed in with (nil through the API and for the system).
    package let sessionID: UUID?

    package init(operatorID: UUID, role: Role, tenantID: UUID, tokenID: UUID?, sessionID: UUID? = nil) {
        self.operatorID = operatorID
        self.role = role.rawValue
        self.tenantID = tenantID
        self.tokenID = tokenID
        self.sessionID = sessionID
    }

    private init(system: Void) {
        self.operatorID = nil
        self.role = "system"
        self.tenantID = platformTenantID
        self.tokenID = nil
        self.sessionID = nil
    }

    /// The system actor: audited with no actor id and the role `system`.
    package static let system = Principal(system: ())

    /// Whoever calls a public operation (no token): audited with no actor id and the role
    /// `anonymous`; `policies/access.yaml`'s `public:` says what it may do.
    package static let anonymous = Principal(anonymous: ())

    private init(anonymous: Void) {
        self.operatorID = nil
        self.role = "anonymous"
        self.tenantID = platformTenantID
        self.tokenID = nil
        self.sessionID = nil
    }

    /// The principal's role, nil for the system actor.
    package var knownRole: Role? { Role(rawValue: role) }
}
