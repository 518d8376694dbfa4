import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// The Security page's time zone form: the operator's own zone, which every page shows times in.
    package func registerTimeZone(on group: RouterGroup<AppRequestContext>) {
        post("security/time-zone", on: group) { console in
            let name = console.form["time_zone"] ?? ""
            return try await console.submit {
                let changed = try await console.runOnOwnSession(SetOwnTimeZone(name: name))
                return .redirect(
                    to: "/console/security",
                    flash: changed ? "Times now show in \(name)." : "Times already show in \(name).")
            } refused: { issues in
                try await securityPage(console, issues: issues, chosen: name)
            }
        }
    }

    /// The Security page: the second factor, the time zone (`chosen` kept when refused), notifications
    /// and sessions.
    package func securityPage(_ console: ConsoleRequest, issues: [FieldIssue] = [], chosen: String? = nil) async throws
        -> ConsoleAnswer
    {
        let state = try await console.readOwn(SecondFactorState())
        let zone = OperatorTimeZone.name(of: console.principal.timeZone)
        var values: [String: Any] = [
            "recoveryCodesLeft": state.recoveryCodesLeft, "email": state.email,
            "maxFailures": policies.console.maxFailuresPerAccount,
            "zone": zone, "now": ConsoleTime.text(Date()),
            "zonesHTML": OperatorTimeZone.optionsHTML(selected: chosen ?? zone),
        ]
        if state.sealedSecret != nil { values["enrolled"] = true }
        let choices = try await mailChoices(console)
        values["mailChoices"] = choices.map {
            ["topic": $0.topic, "description": $0.description, "checked": $0.subscribed] as [String: Any]
        }
        values["offersMail"] = !choices.isEmpty
        if policies.console.secondFactorRequired.contains(console.principal.role) {
            values["required"] = true
        }
        let refusal = FormRefusal(issues)
        refusal.add(to: &values)
        return console.page(
            "security", title: "Security", status: refusal.isEmpty ? .ok : .unprocessableContent, values)
    }
}

/// A notification mail the Security page offers: its topic, what it is, whether the operator gets it.
package typealias MailChoice = (topic: String, description: String, subscribed: Bool)

/// Sets the signed-in operator's own time zone (`operators.time_zone_set`, the zone before and
/// after in the event). Every operator may, for themselves only. A name the system does not know
/// is refused (`time_zone`) and changes nothing; the zone already set changes nothing and records
/// nothing. Answers whether it changed.
package struct SetOwnTimeZone: AuditedOperation {
    package static let action: Action = "operators.time_zone_set"
    package let name: String

    package init(name: String) { self.name = name }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Bool> {
        guard let operatorID = unit.principal.operatorID, unit.principal.sessionID != nil else {
            throw DomainError.inconsistent("setting a time zone needs a console session")
        }
        guard OperatorTimeZone.zone(choosing: name) != nil else {
            throw DomainError.invalid([
                FieldIssue(
                    field: "time_zone", code: "unknown_time_zone",
                    message: "must be one of the listed time zones, such as Europe/Berlin or UTC")
            ])
        }
        let tenant = unit.principal.tenantID
        guard
            let before = try await unit.first(
                "SELECT time_zone FROM operators WHERE tenant_id = \(tenant) AND id = \(operatorID) FOR UPDATE",
                { try $0.decode(String.self) })
        else { throw DomainError.notFound("Operator \(operatorID.text)") }
        guard before != name else { return .unchanged(false) }
        try await unit.execute(
            "UPDATE operators SET time_zone = \(name) WHERE tenant_id = \(tenant) AND id = \(operatorID)")
        return Audited(
            true,
            event: AuditRecord(
                action: Self.action, tenantID: tenant, targetType: "operator", targetID: operatorID.text, reason: nil,
                before: try AuditRecord.json(["time_zone": before]), after: try AuditRecord.json(["time_zone": name])))
    }
}
