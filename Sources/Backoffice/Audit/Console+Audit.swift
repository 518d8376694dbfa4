import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird
import NIOCore

extension Console {
    /// The audit log (auditors, managers, a partner admin its own tenant's): filters by actor,
    /// action, target and time range, oldest first with cursor paging; an event's before and after
    /// side by side; "verify the chain" with its result. What a role sees masked stays masked.
    func registerAudit(on group: RouterGroup<AppRequestContext>) {
        section("audit", "Audit log", needs: ListAuditEvents.action, on: group) { console in
            try await console.auditPage()
        }
        get("audit/export", on: group, holdsTransaction: false) { console in
            let lines = try await console.read(
                ExportAuditEvents(log: AuditLog(database: database), filter: try AuditPage.filter(console.form)))
            return .download(
                name: "audit-events.jsonl", contentType: "application/jsonl",
                pages: lines)
        }
        get("audit/verify", on: group) { console in
            let report = try await console.read(VerifyAuditLog(log: AuditLog(database: database), checkpoint: []))
            var data: [String: Any] = [
                "chains": report.chains, "events": report.events, "intact": report.failure == nil,
            ]
            if let failure = report.failure {
                data["failure"] = [
                    "chain": failure.chain, "seq": failure.seq.map(String.init) ?? "—", "kind": failure.kind.rawValue,
                    "detail": failure.detail, "event": failure.eventID.map(String.init) ?? "—",
                ]
            }
            return console.page("audit-verify", title: "Verify the audit log", data)
        }
        get("audit/{event}", on: group) { console in
            guard let id = console.parameters.get("event").flatMap(Int64.init), id > 0 else {
                throw DomainError.notFound("Event")
            }
            let found = try await console.read(ListAuditEvents(filter: AuditFilter(), afterID: id - 1, limit: 1))
            guard let event = found.first, event.id == id else { throw DomainError.notFound("Event \(id)") }
            return console.page(
                "audit-event", title: "Event \(id)",
                [
                    "event": AuditEventView(event), "before": AuditPage.pretty(event.before),
                    "after": AuditPage.pretty(event.after),
                ])
        }
    }
}

extension ConsoleRequest {
    /// Whether the operator's role may perform `action` (to offer only what it may do).
    func may(_ action: Action) -> Bool { context.policies.access.allows(principal.role, action) }
}

/// The audit pages' filters and formatting.
enum AuditPage {
    /// The filters of the log's form; a malformed one is a field message (422).
    static func filter(_ form: ConsoleForm) throws -> AuditFilter {
        var issues: [FieldIssue] = []
        let actor = form.text("actor_id").flatMap { text -> UUID? in
            guard let id = UUID(uuidString: text) else {
                issues.append(
                    FieldIssue(field: "actor_id", code: "invalid_id", message: "must be an operator's id (a UUID)"))
                return nil
            }
            return id
        }
        let since = form.time("since", issues: &issues)
        let until = form.time("until", issues: &issues)
        guard issues.isEmpty else { throw DomainError.invalid(issues) }
        return AuditFilter(
            actorID: actor, action: form.text("action"), targetID: form.text("target_id"), since: since, until: until)
    }

    /// The form's values as its fields show them again: the times in the operator's zone (a day's
    /// link from the auditor's home names UTC instants).
    static func values(_ form: ConsoleForm, _ filter: AuditFilter) -> [String: String] {
        var shown = form.values
        for (field, time) in [("since", filter.since), ("until", filter.until)] {
            if let time { shown[field] = ConsoleTime.field(time) }
        }
        return shown
    }

    /// A snapshot's JSON, indented for reading; "—" when there is none.
    static func pretty(_ json: String?) -> String {
        guard let json,
            let object = try? JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed]),
            let data = try? JSONSerialization.data(
                withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .fragmentsAllowed])
        else { return json ?? "—" }
        return String(decoding: data, as: UTF8.self)
    }
}

/// One audit event as the log shows it.
struct AuditEventView {
    let id: Int64, at: ShownTime, action: String, actorRole: String, actorID: String?, targetType: String,
        targetID: String, via: String
    let reason: String?, requestID: String, chain: String, seq: Int64

    init(_ event: AuditEventRecord) {
        id = event.id
        at = ConsoleTime.text(event.occurredAt)
        action = event.action
        actorRole = event.actorRole.replacingOccurrences(of: "_", with: " ")
        actorID = event.actorID?.text
        targetType = event.targetType
        targetID = event.targetID
        via = event.via
        reason = event.reason
        requestID = event.requestID
        chain = event.chain
        seq = event.seq
    }
}

extension ConsoleRequest {
    /// The log's page: the filter's events, newest page by cursor; a filter refused is shown by its fields.
    fileprivate func auditPage() async throws -> ConsoleAnswer {
        var data: [String: Any] = ["values": form.values, "canVerify": may(VerifyAuditLog.action)]
        if may(ExportAuditEvents.action) {
            data["export"] = ConsoleLinks.path(
                "/console/audit/export", form.values.filter { $0.key != "cursor" }.mapValues { Optional($0) })
        }
        return try await submit {
            let (filter, after) = (try AuditPage.filter(form), try Cursor.number(form.text("cursor")) ?? 0)
            data["values"] = AuditPage.values(form, filter)
            let events = try await read(
                ListAuditEvents(filter: filter, afterID: after, limit: Console.pageSize + 1))
            let (shown, next) = keysetPage(events, limit: Console.pageSize) { [String($0.id)] }
            data["events"] = shown.map(AuditEventView.init)
            data["hasEvents"] = !shown.isEmpty
            if let next {
                var query = form.values.filter { $0.key != "cursor" }.mapValues { Optional($0) }
                query["cursor"] = next
                data["next"] = ConsoleLinks.path("/console/audit", query)
            }
            return page("audit", title: "Audit log", data)
        } refused: { issues in
            FormRefusal(issues).add(to: &data)
            return page("audit", title: "Audit log", data)
        }
    }
}
