import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// Forum moderation: the queue (most severe, then oldest), a case's page with the content, the
    /// reports, the author's history, taking it and deciding it with a ground; and the statements
    /// of reasons of its decisions.
    func registerModeration(on group: RouterGroup<AppRequestContext>) {
        section("moderation", "Moderation", needs: ModerationQueue.action, on: group) { console in
            let queue = try await console.read(ModerationQueue(limit: 100))
            let now = console.now
            return console.page(
                "moderation-queue", title: "Moderation queue",
                [
                    "cases": queue.map { QueueLine($0, me: console.principal.operatorID, now: now) },
                    "hasCases": !queue.isEmpty, "canTake": console.may(TakeCase.action),
                ])
        }
        post("moderation/next", on: group) { console in
            let queue = try await console.read(ModerationQueue(limit: 100))
            let now = console.now
            let free = queue.first { [nil, console.principal.operatorID].contains($0.moderationCase.holder(at: now)) }
            guard let next = free else {
                return console.redirect("/console/moderation", flash: "No case is free: the others are held.")
            }
            _ = try await console.run(TakeCase(caseID: next.moderationCase.id))
            return console.redirect(
                "/console/moderation/cases/\(next.moderationCase.id.text)", flash: "You hold this case for 30 minutes.")
        }
        get("moderation/cases/{id}", on: group) { console in
            try await console.casePage(try console.routeID(), issues: [])
        }
        post("moderation/cases/{id}/take", on: group) { console in
            let id = try console.routeID()
            return try await console.submit {
                _ = try await console.run(TakeCase(caseID: id))
                return console.redirect("/console/moderation/cases/\(id.text)", flash: "You hold this case.")
            } refused: { issues in
                try await console.casePage(id, issues: issues)
            }
        }
        post("moderation/cases/{id}/decision", on: group) { console in
            let id = try console.routeID()
            // A stale version: the page shows the case as it is now, with the moderator's choices kept (412).
            let changed =
                "The case changed since you opened it (a new text or new reports): read it again below, then "
                + "decide."
            return try await console.submit(reading: FormRefusal.reading(changed: changed)) {
                let decided = try await console.run(
                    DecideCase(
                        caseID: id, kind: DecisionKind(rawValue: console.form.text("decision") ?? "") ?? .hold,
                        ground: console.form.text("ground") ?? "", explanation: console.form.text("explanation") ?? "",
                        ifMatch: console.form["version"]))
                return console.redirect(
                    "/console/moderation/cases/\(id.text)",
                    flash: "Decided: \(decided.decision.kind.rawValue). The statement of reasons is below.")
            } refused: { issues in
                let stale = issues.contains { $0.code == "changed" }
                return try await console.casePage(
                    id, issues: issues, values: console.form.values, status: stale ? .preconditionFailed : nil)
            }
        }
    }
}

/// A line of the queue as the page shows it.
struct QueueLine: TemplateValues {
    let queued: QueuedCase
    let me: UUID?
    let now: Date

    init(_ queued: QueuedCase, me: UUID?, now: Date) { (self.queued, self.me, self.now) = (queued, me, now) }

    var templateValues: [(String, Any)] {
        let c = queued.moderationCase
        let holder = c.holder(at: now)
        return [
            ("id", c.id.text), ("kind", c.contentKind.rawValue), ("severity", CaseSeverity.word(c.severity)),
            ("excerpt", c.contentText.count > 140 ? String(c.contentText.prefix(140)) + "…" : c.contentText),
            ("reports", c.reportCount), ("origin", c.origin == .screen ? "the screen" : "reports"),
            ("opened", ConsoleTime.text(c.openedAt)), ("author", c.authorID?.text ?? ""),
            ("upheld", queued.author.upheldCases), ("locks", queued.author.locks),
            ("repeatOffender", queued.author.repeatOffender),
            ("heldBy", holder == nil ? "" : holder == me ? "you" : queued.holderEmail ?? "another moderator"),
        ]
    }
}

/// A case's severity in words.
enum CaseSeverity {
    static func word(_ severity: Int) -> String {
        switch severity {
        case 4: "critical"
        case 3: "urgent"
        case 2: "high"
        default: "low"
        }
    }
}

extension ConsoleRequest {
    /// A case's page: the content, why it is here, its author's history, the decision form while
    /// it is open (read-only while another moderator holds it) and its statements of reasons.
    fileprivate func casePage(
        _ id: UUID, issues: [FieldIssue], values: [String: String] = [:], status: HTTPResponse.Status? = nil
    ) async throws -> ConsoleAnswer {
        let detail = try await read(ReadModerationCase(caseID: id))
        let policy = context.policies.moderation
        let c = detail.queued.moderationCase
        let now = now
        let holder = c.holder(at: now)
        let heldByOther = holder != nil && holder != principal.operatorID
        let chosen = values["decision"] ?? ""
        var data: [String: Any] = [
            "case": QueueLine(detail.queued, me: principal.operatorID, now: now), "text": c.contentText,
            "rules": c.matchedRules.joined(separator: ", "), "hasRules": !c.matchedRules.isEmpty,
            "reports": detail.reports.map {
                ["reason": policy.reason($0.reason)?.label ?? $0.reason, "at": ConsoleTime.text($0.reportedAt)]
            },
            "hasReports": !detail.reports.isEmpty, "isOpen": c.isOpen, "heldByOther": heldByOther,
            "holdsIt": holder == principal.operatorID, "until": c.assignedUntil.map(ConsoleTime.text) ?? "",
            "canDecide": c.isOpen && !heldByOther && may(DecideCase.action),
            "canTake": c.isOpen && !heldByOther && holder != principal.operatorID && may(TakeCase.action),
            "decisions": DecisionKind.moderators.map {
                ConsoleOption.choice(
                    value: $0.rawValue, label: DecisionWords.label($0), selected: $0.rawValue == chosen)
            },
            "grounds": [ConsoleOption.choice(value: "", label: "Choose a ground", selected: values["ground"] == nil)]
                + policy.grounds.map {
                    ConsoleOption.choice(value: $0.code, label: $0.label, selected: $0.code == values["ground"])
                },
            "values": values, "version": c.version,
            "statements": detail.decisions.reversed().map {
                StatementView(StatementOfReasons($0, on: c, policy: policy))
            },
            "overturned": c.overturnedAt != nil, "overturnedAt": c.overturnedAt.map(ConsoleTime.text) ?? "",
        ]
        FormRefusal(issues).add(to: &data)
        return page(
            "moderation-case", title: "Case: \(c.contentKind.rawValue)",
            status: status ?? (issues.isEmpty ? .ok : .unprocessableContent), data)
    }
}

/// A decision in words, as the form and the statements say it.
enum DecisionWords {
    static func label(_ kind: DecisionKind) -> String {
        switch kind {
        case .dismiss: "Dismiss: no breach, the content stays"
        case .remove: "Remove the content"
        case .warn: "Remove the content and warn the author"
        case .lock: "Remove the content and lock the author's account"
        case .mask: "Masked by the screen"
        case .hold: "Held by the screen for review"
        }
    }
}

/// A statement of reasons as the case page shows it.
struct StatementView: TemplateValues {
    let statement: StatementOfReasons

    init(_ statement: StatementOfReasons) { self.statement = statement }

    var templateValues: [(String, Any)] {
        [
            ("id", statement.decisionID.text), ("decision", DecisionWords.label(statement.decision)),
            ("facts", statement.facts), ("explanation", statement.explanation),
            ("grounds", statement.grounds.map { ["label": $0.label, "section": $0.section, "code": $0.code] }),
            ("automatedDetection", statement.automatedDetection ? "yes" : "no"),
            ("automatedDecision", statement.automatedDecision ? "yes" : "no"),
            ("locked", statement.accountLocked), ("at", ConsoleTime.text(statement.decidedAt)),
            ("redress", statement.redress),
        ]
    }
}
