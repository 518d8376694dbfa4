import BackofficePlatform
import Foundation
import Mustache

extension TimeZone {
    /// UTC by its name (Foundation's `.gmt` is named `GMT`): every operator's zone until they choose one.
    package static let utc = TimeZone(identifier: "UTC") ?? .gmt
}

/// The time zones an operator may choose on the Security page: UTC, then every IANA zone this
/// system's time zone database knows, by name (`GMT`, which Foundation calls UTC too, only as UTC).
package enum OperatorTimeZone {
    package static let names: [String] =
        ["UTC"] + TimeZone.knownTimeZoneIdentifiers.filter { $0 != "UTC" && $0 != "GMT" }.sorted()
    /// Each name's zone, made once: a console request looks its operator's up, never building one.
    private static let zones: [String: TimeZone] = Dictionary(
        uniqueKeysWithValues: names.compactMap { name in TimeZone(identifier: name).map { (name, $0) } })

    /// Each name's `<option>` (`America/New_York` shown as `America/New York`), written once.
    private static let options: [(name: String, html: HTML)] = names.map { ($0, option($0, selected: false)) }

    /// The Security page's `<option>`s, `selected` marked: markup written once, joined in one pass
    /// (the page drew 600 options through its template, a third of its time).
    package static func optionsHTML(selected: String) -> HTML {
        HTML(joining: options.lazy.map { $0.name == selected ? option($0.name, selected: true) : $0.html })
    }

    private static func option(_ name: String, selected: Bool) -> HTML {
        let label = name.replacingOccurrences(of: "_", with: " ")
        return selected
            ? "<option value=\"\(name)\" selected>\(label)</option>" : "<option value=\"\(name)\">\(label)</option>"
    }

    /// The name the operator chose for `zone` (Foundation names UTC `GMT`).
    package static func name(of zone: TimeZone) -> String { zone.identifier == "GMT" ? "UTC" : zone.identifier }

    /// The zone `name` names, when it is one of `names` (exactly: `europe/berlin` is not), else nil.
    package static func zone(choosing name: String) -> TimeZone? { zones[name] }

    /// A stored zone; UTC if this system's database no longer knows its name.
    package static func zone(named name: String) -> TimeZone { zone(choosing: name) ?? .utc }
}

/// Times as the console shows and reads them: in the operator's own time zone (`zone`, the
/// operator's setting, read from the request's scope; UTC elsewhere), the UTC instant kept in
/// each `<time>` element's `datetime` and title.
package enum ConsoleTime {
    /// The zone of the request being answered: its signed-in operator's (the request's one context,
    /// `RequestScope`, bound around the page's handler); UTC outside a console request.
    package static var zone: TimeZone { RequestScope.current?.principal?.timeZone ?? .utc }

    /// `date` to show in the request's zone.
    package static func text(_ date: Date) -> ShownTime { ShownTime(date, in: zone) }

    /// `date` as a `datetime-local` field's value in the request's zone (`2026-12-01T10:30`).
    package static func field(_ date: Date) -> String { field(date, in: zone) }

    /// `date` as a `datetime-local` field's value in `zone`.
    package static func field(_ date: Date, in zone: TimeZone) -> String {
        let local = LocalTime(date, in: zone)
        return "\(local.day)T\(local.clock)"
    }

    /// A time from a `datetime-local` field (`2026-12-01T09:30`, seconds allowed), read in `zone`
    /// (the request's by default; the field's label names it), or an RFC 3339 time with its own offset; nil
    /// when empty. A local time the zone skips (clocks go forward) is refused; one it has twice
    /// (clocks go back) is the first. Anything else is `field`'s message.
    package static func parse(_ text: String?, field: String, in zone: TimeZone = ConsoleTime.zone) throws -> Date? {
        guard let text, !text.isEmpty else { return nil }
        if text.count > 19, let date = try? Date(text, strategy: .iso8601) { return date }
        guard let local = LocalTime(reading: text) else {
            throw DomainError.invalid([
                FieldIssue(
                    field: field, code: "invalid_time", message: "must be a date and time, such as 2026-12-01T09:30")
            ])
        }
        guard let date = local.instant(in: zone) else {
            throw DomainError.invalid([
                FieldIssue(
                    field: field, code: "skipped_time",
                    message: "does not exist in \(OperatorTimeZone.name(of: zone)): the clocks skip it "
                        + "(they go forward that night)"
                )
            ])
        }
        return date
    }
}

/// A time as a page shows it: `{{at}}` is the operator's local time with its offset
/// (`2026-03-29 03:30 UTC+2`), `{{at.utc}}` the instant in RFC 3339 for `datetime`, `{{at.utcText}}`
/// the same for people (the title). The `time` partial writes the element: `{{#at}}{{>time}}{{/at}}`.
package struct ShownTime: Sendable, Equatable, CustomStringConvertible, MustacheParent, MustacheCustomRenderable {
    package let date: Date
    package let zone: TimeZone

    package init(_ date: Date, in zone: TimeZone) {
        self.date = date
        self.zone = zone
    }

    /// `2026-03-29 03:30 UTC+2`: to the minute, in the operator's zone, with the offset that held then.
    package var text: String {
        let local = LocalTime(date, in: zone)
        return "\(local.day) \(local.clock) \(local.offsetText)"
    }

    /// The instant in RFC 3339 (`2026-03-29T01:30:00Z`): the element's `datetime`.
    package var utc: String { date.formatted(.iso8601) }

    /// `2026-03-29 01:30:00 UTC`: the instant for people (the element's title).
    package var utcText: String {
        let local = LocalTime(date, in: .utc)
        return "\(local.day) \(local.clock):\(local.second < 10 ? "0" : "")\(local.second) UTC"
    }

    /// The `<time>` element, for a page written in Swift (the orders board).
    package var html: HTML { "<time datetime=\"\(utc)\" title=\"\(utcText)\">\(text)</time>" }

    package var description: String { text }
    package var renderText: String { text }
    package var isNull: Bool { false }

    package func child(named name: String) -> Any? {
        switch name {
        case "utc": utc
        case "utcText": utcText
        case "text": text
        default: nil
        }
    }
}

/// A wall-clock time in a zone: its day, hour, minute and second, and the zone's offset then.
/// Pure arithmetic over the zone's offset (`UTCDay` for the calendar), so a page of times costs
/// one offset lookup per time.
package struct LocalTime: Equatable {
    package let day: UTCDay
    package let hour: Int
    package let minute: Int
    package let second: Int
    /// Seconds east of UTC at that instant (nil for a time read from a field, whose zone is not yet applied).
    package let offset: Int?

    package init(_ date: Date, in zone: TimeZone) {
        let offset = zone.secondsFromGMT(for: date)
        let seconds = Int(date.timeIntervalSince1970.rounded(.down)) + offset
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let rest = seconds - days * 86_400
        self.init(day: UTCDay(number: days), seconds: rest, offset: offset)
    }

    private init(day: UTCDay, seconds: Int, offset: Int?) {
        self.day = day
        hour = seconds / 3600
        minute = seconds % 3600 / 60
        second = seconds % 60
        self.offset = offset
    }

    /// A `datetime-local` value: `2026-12-01T09:30` or `2026-12-01T09:30:15`, a real date and time.
    package init?(reading text: String) {
        let parts = text.split(separator: "T", omittingEmptySubsequences: false)
        guard parts.count == 2, let day = UTCDay(parts[0]) else { return nil }
        let clock = parts[1].split(separator: ":", omittingEmptySubsequences: false)
        guard (2...3).contains(clock.count), clock.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isASCIIDigit) }),
            let hour = Int(clock[0]), let minute = Int(clock[1]), hour < 24, minute < 60
        else { return nil }
        let second = clock.count == 3 ? Int(clock[2]) ?? 60 : 0
        guard second < 60 else { return nil }
        self.init(day: day, seconds: hour * 3600 + minute * 60 + second, offset: nil)
    }

    /// `09:30`.
    package var clock: String { "\(hour < 10 ? "0" : "")\(hour):\(minute < 10 ? "0" : "")\(minute)" }

    /// `UTC`, `UTC+2`, `UTC-3:30`.
    package var offsetText: String {
        guard let offset, offset != 0 else { return "UTC" }
        let minutes = abs(offset) / 60
        return "UTC\(offset < 0 ? "-" : "+")\(minutes / 60)"
            + (minutes % 60 == 0 ? "" : ":\(minutes % 60 < 10 ? "0" : "")\(minutes % 60)")
    }

    /// The instant this wall-clock time names in `zone`: of the offsets the zone has around it, the
    /// first that gives back this very time (so a time the clocks pass twice is its first); nil when
    /// none does (a time the clocks skip).
    package func instant(in zone: TimeZone) -> Date? {
        let wall = Double(day.number * 86_400 + hour * 3600 + minute * 60 + second)
        let offsets = [wall - 86_400, wall, wall + 86_400].map {
            zone.secondsFromGMT(for: Date(timeIntervalSince1970: $0))
        }
        let candidates = Set(offsets).map { Date(timeIntervalSince1970: wall - Double($0)) }.sorted()
        return candidates.first { LocalTime($0, in: zone).sameWallClock(as: self) }
    }

    private func sameWallClock(as other: LocalTime) -> Bool {
        day == other.day && hour == other.hour && minute == other.minute && second == other.second
    }
}

extension ConsoleForm {
    /// The field's time (a `datetime-local` value read in the operator's zone, or RFC 3339), nil
    /// when empty; a malformed one adds its issue to `issues` (so a form reports every field at once).
    package func time(_ field: String, issues: inout [FieldIssue]) -> Date? {
        do { return try ConsoleTime.parse(text(field), field: field) } catch DomainError.invalid(let found) {
            issues += found
        } catch {
            issues.append(FieldIssue(field: field, code: "invalid_time", message: "must be a date and time"))
        }
        return nil
    }
}
