import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// System messages (backend managers): what shows when (the next two weeks, day by day), the
    /// messages newest first, compose (also as a copy of another), a message's page with publish
    /// and retract. A refused publish (the maintenance notice period) is shown in place.
    func registerMessages(on group: RouterGroup<AppRequestContext>) {
        section("messages", "Messages", needs: ListMessages.action, on: group) { console in
            let (page, cursor) = try await newestFirstPage(after: console.form.text("cursor"), limit: Self.pageSize) {
                try await console.read(ListMessages(after: $0, limit: $1))
            }
            let now = console.now
            // The calendar reads the newest 500: messages older than those have long stopped showing.
            let first = console.form.text("cursor") == nil && cursor == nil
            let recent = first ? Array(page) : try await console.read(ListMessages(after: nil, limit: 500))
            var data: [String: Any] = [
                "messages": page.map { MessageView($0, now: now) }, "hasMessages": !page.isEmpty,
                "calendar": MessageCalendar(recent, from: now, days: 14).days,
                "canCreate": console.may(CreateMessage.action),
            ]
            if let cursor { data["next"] = ConsoleLinks.path("/console/messages", ["cursor": cursor]) }
            return console.page("messages", title: "Messages", data)
        }
        get("messages/new", on: group) { console in
            var values: [String: String] = ["severity": "info", "audience": "all"]
            if let copy = console.form.text("copy").flatMap(UUID.init(uuidString:)) {
                values = MessageForm.values(of: try await console.read(GetMessage(id: copy)))
            }
            return console.messageForm(values: values, issues: [])
        }
        post("messages/new", on: group) { console in
            return try await console.submit {
                let message = try await console.run(try MessageForm(console.form).create())
                return console.redirect(
                    "/console/messages/\(message.id.text)", flash: "Saved as a draft: publish it when it is ready.")
            } refused: { issues in
                console.messageForm(values: console.form.values, issues: issues)
            }
        }
        get("messages/{id}", on: group) { console in try await console.messagePage(try console.routeID(), issues: []) }
        post("messages/{id}/publish", on: group) { console in
            let id = try console.routeID()
            return try await console.submit {
                let message = try await console.run(PublishMessage(messageID: id, ifMatch: console.form["version"]))
                let state = message.state(at: console.now)
                return console.redirect(
                    "/console/messages/\(id.text)", flash: "Published: the message is \(state.rawValue).")
            } refused: { issues in
                try await console.messagePage(id, issues: issues)
            }
        }
        post("messages/{id}/retract", on: group) { console in
            let id = try console.routeID()
            return try await console.submit {
                try console.form.confirm("retract")
                _ = try await console.run(
                    RetractMessage(messageID: id, reason: console.form.text("reason"), ifMatch: console.form["version"])
                )
                return console.redirect("/console/messages/\(id.text)", flash: "Retracted: the app no longer shows it.")
            } refused: { issues in
                try await console.messagePage(id, issues: issues, values: console.form.values)
            }
        }
    }
}

extension ConsoleRequest {
    /// The compose form, filled with `values`, each issue next to its field (422 with issues).
    fileprivate func messageForm(values: [String: String], issues: [FieldIssue]) -> ConsoleAnswer {
        var data: [String: Any] = [
            "values": values,
            "severities": ConsoleOption.all(
                SystemMessage.Severity.allCases.map(\.rawValue), selected: values["severity"]),
            "audiences": ConsoleOption.all(
                SystemMessage.Audience.allCases.map(\.rawValue), selected: values["audience"]),
            "noticeHours": context.policies.messages.maintenanceNoticeHours,
        ]
        FormRefusal(issues).add(to: &data)
        return page("message-form", title: "New message", status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }

    /// A message's page: what it says, when it shows, and publish or retract as its state allows
    /// and the role may; `issues` in place (422).
    fileprivate func messagePage(_ id: UUID, issues: [FieldIssue], values: [String: String] = [:]) async throws
        -> ConsoleAnswer
    {
        let message = try await read(GetMessage(id: id))
        let state = message.state(at: now)
        var data: [String: Any] = [
            "message": MessageView(message, now: now), "version": EntityTag.of(message.version),
            "values": values,
            "noticeHours": context.policies.messages.maintenanceNoticeHours,
        ]
        if state == .draft && may(PublishMessage.action) { data["canPublish"] = true }
        if (state == .scheduled || state == .published) && may(RetractMessage.action) { data["canRetract"] = true }
        if may(CreateMessage.action) { data["canCopy"] = true }
        FormRefusal(issues).add(to: &data)
        return page("message", title: message.title, status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }
}

/// A message as the list, the calendar and its page show it (times in UTC, shown in the
/// operator's zone by the page's script).
struct MessageView {
    let id: String, title: String, body: String, severity: String, audience: String, state: String
    let publishAt: ShownTime?, expiresAt: ShownTime?, windowStartsAt: ShownTime?, windowEndsAt: ShownTime?,
        retractReason: String?
    let isMaintenance: Bool

    init(_ message: SystemMessage, now: Date) {
        id = message.id.text
        title = message.title
        body = message.body
        severity = message.severity.rawValue
        audience = message.audience.rawValue.replacingOccurrences(of: "_", with: " ")
        state = message.state(at: now).rawValue
        publishAt = message.publishAt.map(ConsoleTime.text)
        expiresAt = message.expiresAt.map(ConsoleTime.text)
        windowStartsAt = message.windowStartsAt.map(ConsoleTime.text)
        windowEndsAt = message.windowEndsAt.map(ConsoleTime.text)
        retractReason = message.retractReason
        isMaintenance = message.severity == .maintenance
    }
}

/// What shows when: for each UTC day from today, the published messages showing some time that
/// day and the maintenance windows that fall in it. Drafts and retracted messages are not on it.
struct MessageCalendar {
    struct Day {
        let date: String
        let label: String
        let showing: [Entry]
        let windows: [Entry]
        var quiet: Bool { showing.isEmpty && windows.isEmpty }
    }

    struct Entry {
        let id: String, title: String, severity: String
    }

    let days: [Day]

    /// "Thu, Nov 26", in UTC.
    private static let dayLabel = Date.FormatStyle(
        locale: Locale(identifier: "en_US_POSIX"), timeZone: TimeZone(identifier: "UTC")!
    )
    .weekday(.abbreviated).month(.abbreviated).day()

    init(_ messages: [SystemMessage], from now: Date, days count: Int) {
        let calendar = Calendar.utc
        let today = calendar.startOfDay(for: now)
        let published = messages.filter { $0.status == .published }
        days = (0..<count).map { offset in
            let start = calendar.date(byAdding: .day, value: offset, to: today)!
            let end = calendar.date(byAdding: .day, value: 1, to: start)!
            func entry(_ message: SystemMessage) -> Entry {
                Entry(id: message.id.text, title: message.title, severity: message.severity.rawValue)
            }
            let showing = published.filter { message in
                (message.publishAt ?? message.createdAt) < end && (message.expiresAt.map { $0 > start } ?? true)
            }
            let windows = published.filter { message in
                guard let from = message.windowStartsAt, let to = message.windowEndsAt else { return false }
                return from < end && to > start
            }
            return Day(
                date: start.formatted(.iso8601.year().month().day()),
                label: start.formatted(Self.dayLabel),
                showing: showing.map(entry), windows: windows.map(entry))
        }
    }
}

/// The compose form's fields, read into `CreateMessage`: times in UTC (`datetime-local`), the
/// window only for a maintenance notice.
struct MessageForm {
    let form: ConsoleForm

    init(_ form: ConsoleForm) { self.form = form }

    func create() throws -> CreateMessage {
        var issues: [FieldIssue] = []
        func time(_ field: String) -> Date? { form.time(field, issues: &issues) }
        let severity = SystemMessage.Severity(rawValue: form["severity"] ?? "")
        let audience = SystemMessage.Audience(rawValue: form["audience"] ?? "all")
        if severity == nil {
            issues.append(FieldIssue(field: "severity", code: "unknown", message: "choose a severity"))
        }
        if audience == nil {
            issues.append(FieldIssue(field: "audience", code: "unknown", message: "choose an audience"))
        }
        let (publishAt, expiresAt) = (time("publish_at"), time("expires_at"))
        let maintenance = severity == .maintenance
        let (startsAt, endsAt) = maintenance ? (time("window_starts_at"), time("window_ends_at")) : (nil, nil)
        guard issues.isEmpty, let severity, let audience else { throw DomainError.invalid(issues) }
        return CreateMessage(
            title: form["title"] ?? "", body: form["body"] ?? "", severity: severity, audience: audience,
            publishAt: publishAt,
            expiresAt: expiresAt, windowStartsAt: startsAt, windowEndsAt: endsAt)
    }

    /// A stored message as the form's values (for a copy): times as `datetime-local` in UTC.
    static func values(of message: SystemMessage) -> [String: String] {
        func field(_ date: Date?) -> String { date.map(ConsoleTime.field) ?? "" }
        return [
            "title": message.title, "body": message.body, "severity": message.severity.rawValue,
            "audience": message.audience.rawValue,
            "publish_at": "", "expires_at": field(message.expiresAt), "window_starts_at": field(message.windowStartsAt),
            "window_ends_at": field(message.windowEndsAt),
        ]
    }
}
