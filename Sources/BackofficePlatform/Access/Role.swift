import Foundation

/// A role (see ARCHITECTURE.md, "Roles"). `policies/access.yaml` says what each may do.
package enum Role: String, CaseIterable, Sendable, Codable {
    case platformAdmin = "platform_admin"
    case backendManager = "backend_manager"
    case auditor
    case partnerAdmin = "partner_admin"
    case partnerStaff = "partner_staff"
    case appService = "app_service"
    /// An on-staff expert who writes the app's articles (its own drafts only; never publishes).
    case expert
    /// A forum moderator: the moderation queue and its decisions (platform-wide, customer PII masked).
    case moderator

    /// Whether the role acts for the platform (all tenants) or for one partner tenant.
    package var isPlatform: Bool {
        switch self {
        case .platformAdmin, .backendManager, .auditor, .appService, .expert, .moderator: true
        case .partnerAdmin, .partnerStaff: false
        }
    }

    /// Whether principals with this role are people or services.
    package var kind: String { self == .appService ? "service" : "person" }
}
