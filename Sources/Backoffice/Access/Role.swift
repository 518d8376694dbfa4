import Foundation

/// The platform tenant: platform roles act for it, and a transaction acting for it sees every tenant.
public let platformTenantID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

/// A role (see ARCHITECTURE.md, "Roles"). `policies/access.yaml` says what each may do.
public enum Role: String, CaseIterable, Sendable, Codable {
    case platformAdmin = "platform_admin"
    case backendManager = "backend_manager"
    case auditor
    case partnerAdmin = "partner_admin"
    case partnerStaff = "partner_staff"
    case appService = "app_service"

    /// Whether the role acts for the platform (all tenants) or for one partner tenant.
    public var isPlatform: Bool {
        switch self {
        case .platformAdmin, .backendManager, .auditor, .appService: true
        case .partnerAdmin, .partnerStaff: false
        }
    }

    /// Whether principals with this role are people or services.
    public var kind: String { self == .appService ? "service" : "person" }
}

/// A value the code does not know, read from the database (a newer schema, or corruption) or
/// mapped from the contract: the read fails (500, logged) instead of guessing a default.
public struct UnknownValue: Error, CustomStringConvertible {
    public let type: String
    public let value: String
    public var description: String { "unknown \(type) '\(value)'" }
}

extension RawRepresentable where RawValue == String {
    /// The case named `known`; anything else throws `UnknownValue`, never a silent default.
    public init(known: String) throws {
        guard let value = Self(rawValue: known) else { throw UnknownValue(type: "\(Self.self)", value: known) }
        self = value
    }
}

/// A permission, and the `action` of the audit event its change records.
public enum Action: String, CaseIterable, Sendable, Codable {
    case tenantsCreate = "tenants.create"
    case tenantsList = "tenants.list"
    case tenantsRead = "tenants.read"
    case operatorsCreate = "operators.create"
    case operatorsList = "operators.list"
    case operatorsDisable = "operators.disable"
    case tokensCreate = "tokens.create"
    case tokensList = "tokens.list"
    case tokensRevoke = "tokens.revoke"
    case sessionRead = "session.read"
    case accountsSync = "accounts.sync"
    case accountsList = "accounts.list"
    case accountsRead = "accounts.read"
    case accountsLock = "accounts.lock"
    case accountsUnlock = "accounts.unlock"
    case accountsDelete = "accounts.delete"
    case accountsRestore = "accounts.restore"
    case accountsHistory = "accounts.history"
    case accountsPurge = "accounts.purge"
    case accountsReportLogin = "accounts.report_login"
    case accountsPasswordReset = "accounts.password_reset"
    case appealsFile = "appeals.file"
    case appealsList = "appeals.list"
    case appealsResolve = "appeals.resolve"
    case auditRead = "audit.read"
    case auditExport = "audit.export"
    case auditVerify = "audit.verify"
}

/// Who makes a change: an authenticated principal, or the system itself (timed lock expiry,
/// automatic lockout, bootstrap).
public struct Principal: Sendable, Equatable {
    public let operatorID: UUID?
    public let role: String
    public let tenantID: UUID
    public let tokenID: UUID?

    public init(operatorID: UUID, role: Role, tenantID: UUID, tokenID: UUID?) {
        self.operatorID = operatorID
        self.role = role.rawValue
        self.tenantID = tenantID
        self.tokenID = tokenID
    }

    private init(system: Void) {
        self.operatorID = nil
        self.role = "system"
        self.tenantID = platformTenantID
        self.tokenID = nil
    }

    /// The system actor: audited with no actor id and the role `system`.
    public static let system = Principal(system: ())

    /// The principal's role, nil for the system actor.
    public var knownRole: Role? { Role(rawValue: role) }
}
