import BackofficeAPI
import Foundation

/// A permission, and the `action` of the audit event its change records. The contract is the
/// one registry of actions: every operation of `openapi.yaml` names its action (`x-action`), and
/// `policies/access.yaml` may grant only those. A use case names its action with a literal
/// (`static let action: Action = "operators.read"`); a literal the contract does not declare stops
/// a debug build at once.
package struct Action: RawRepresentable, Hashable, Sendable, Codable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    package let rawValue: String

    /// A declared action; nil for a name the contract does not declare.
    package init?(rawValue: String) {
        guard Self.allCases.contains(where: { $0.rawValue == rawValue }) else { return nil }
        self.rawValue = rawValue
    }

    package init(stringLiteral value: String) {
        assert(
            Self.declared.contains(value),
            "action '\(value)' is not declared by any operation of openapi.yaml (x-action)")
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
                text.dropFirst("x-action:".count).trimmingCharacters(in: .whitespaces).trimmingCharacters(
                    in: CharacterSet(charactersIn: "\"'")))
        }
        return names.union(sessionEvents.map(\.rawValue))
    }()

    /// The console's sign-in events, mail queued by a change (`mail.queued`) and the day's mail
    /// runs (`mail.daily_summary`, `mail.appeals_waiting`), and a change held for approval
    /// (`approvals.request`), which no operation of the contract makes: the system records them as
    /// operators sign in and out (`ConsoleSignIn`), as changes send mail (`Outbox`), as the day's
    /// mails go (`DailyMailService`) and as a held change is requested (its own operation's
    /// permission), and no role is granted them.
    package static let sessionEvents: Set<Action> = Set(
        [
            "sessions.sign_in", "sessions.sign_in_failed", "sessions.locked_out", "sessions.sign_out",
            "sessions.sign_out_everywhere",
            "sessions.password_accepted", "operators.set_password", "operators.second_factor_enrolled",
            "operators.time_zone_set",
            "operators.invitation_accepted",
            "mail.queued", "mail.daily_summary", "mail.appeals_waiting", "approvals.request",
        ].map(Action.init(declared:)))
}
