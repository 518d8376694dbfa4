import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Console times in the operator's own zone: shown with the UTC instant, read in the zone, across DST changes")
struct ConsoleTimeZoneTests {
    private let berlin = TimeZone(identifier: "Europe/Berlin")!

    private func instant(_ text: String) throws -> Date { try Date(text, strategy: .iso8601) }

    private func parse(_ text: String, in zone: TimeZone) throws -> Date? {
        try ConsoleTime.parse(text, field: "at", in: zone)
    }

    private func refusal(_ text: String, in zone: TimeZone) -> String? {
        do {
            _ = try parse(text, in: zone)
            return nil
        } catch DomainError.invalid(let issues) {
            return issues.first?.code
        } catch {
            return "\(error)"
        }
    }

    @Test(
        """
        Berlin's spring change (clocks 02:00 → 03:00, 2026-03-29): times either side show their own offset, the \
        UTC instant stays in datetime and title; a time the clocks skip is refused, the hour after it read as CEST
        """
    )
    func springForward() throws {
        let before = ShownTime(try instant("2026-03-29T00:59:00Z"), in: berlin)
        let after = ShownTime(try instant("2026-03-29T01:00:00Z"), in: berlin)
        #expect(before.text == "2026-03-29 01:59 UTC+1")
        #expect(after.text == "2026-03-29 03:00 UTC+2")
        #expect(after.utc == "2026-03-29T01:00:00Z" && after.utcText == "2026-03-29 01:00:00 UTC")
        #expect(
            after.html.renderText
                == #"<time datetime="2026-03-29T01:00:00Z" title="2026-03-29 01:00:00 UTC">"#
                + "2026-03-29 03:00 UTC+2</time>"
        )
        #expect(refusal("2026-03-29T02:00", in: berlin) == "skipped_time")
        #expect(refusal("2026-03-29T02:59", in: berlin) == "skipped_time")
        #expect(try parse("2026-03-29T01:59", in: berlin) == instant("2026-03-29T00:59:00Z"))
        #expect(try parse("2026-03-29T03:00", in: berlin) == instant("2026-03-29T01:00:00Z"))
        #expect(try parse("2026-03-29T03:00", in: .utc) == instant("2026-03-29T03:00:00Z"), "UTC reads as written")
    }

    @Test(
        """
        Berlin's autumn change (clocks 03:00 → 02:00, 2026-10-25): the hour the clocks pass twice shows twice \
        with two offsets, and a time typed in it is read as its first pass
        """
    )
    func fallBack() throws {
        let first = ShownTime(try instant("2026-10-25T00:30:00Z"), in: berlin)
        let second = ShownTime(try instant("2026-10-25T01:30:00Z"), in: berlin)
        #expect(first.text == "2026-10-25 02:30 UTC+2")
        #expect(second.text == "2026-10-25 02:30 UTC+1")
        #expect(try parse("2026-10-25T02:30", in: berlin) == instant("2026-10-25T00:30:00Z"))
        #expect(try parse("2026-10-25T03:00", in: berlin) == instant("2026-10-25T02:00:00Z"))
        #expect(try parse("2026-10-25T01:59:59", in: berlin) == instant("2026-10-24T23:59:59Z"))
    }

    @Test(
        "every quarter hour of both change days reads back from its form field (the repeated hour as its first pass)"
    )
    func roundTrips() throws {
        for start in ["2026-03-28T20:00:00Z", "2026-10-24T20:00:00Z"] {
            var date = try instant(start)
            for _ in 0..<(4 * 12) {
                let field = ConsoleTime.field(date, in: berlin)
                let read = try #require(try parse(field, in: berlin))
                let repeated =
                    berlin.secondsFromGMT(for: date) == 3600 && berlin.secondsFromGMT(for: date - 3600) == 7200
                if repeated {
                    #expect(read == date - 3600, "\(field): the first pass")
                } else {
                    #expect(read == date, "\(field) reads back as \(date)")
                }
                date += 900
            }
        }
    }

    @Test("offsets of half and quarter hours, west and east; a page outside a request shows UTC")
    func offsets() throws {
        let date = try instant("2026-01-15T12:00:00Z")
        #expect(ShownTime(date, in: TimeZone(identifier: "America/St_Johns")!).text == "2026-01-15 08:30 UTC-3:30")
        #expect(ShownTime(date, in: TimeZone(identifier: "Asia/Kathmandu")!).text == "2026-01-15 17:45 UTC+5:45")
        #expect(ShownTime(date, in: TimeZone(identifier: "Pacific/Kiritimati")!).text == "2026-01-16 02:00 UTC+14")
        #expect(ConsoleTime.text(date).text == "2026-01-15 12:00 UTC")
    }

    @Test("malformed times are refused by name: impossible dates, hours, the year 0, other shapes")
    func malformed() {
        for text in [
            "2026-02-30T10:00", "2026-12-01T24:00", "2026-12-01T10:60", "0000-01-01T00:00", "2026-12-01",
            "2026-12-01 10:00", "١٢٣٤-01-01T00:00", "2026-12-01T10:00:60", "tomorrow",
        ] {
            #expect(refusal(text, in: berlin) == "invalid_time", "\(text)")
        }
        #expect(UTCDay("0000-01-01") == nil && UTCDay("0001-01-01") != nil && UTCDay("9999-12-31") != nil)
    }

    @Test("the zones offered: UTC first, exact IANA names only (no case or Unicode variants)")
    func choices() {
        #expect(OperatorTimeZone.names.first == "UTC")
        #expect(OperatorTimeZone.zone(choosing: "Europe/Berlin") != nil)
        let variants = [
            "europe/berlin", "Europe/Berlín", "Europe/Berlin ", "Ｅurope/Berlin", "Nowhere/Land", "", "GMT+1",
        ]
        for name in variants {
            #expect(OperatorTimeZone.zone(choosing: name) == nil, "\(name)")
        }
        #expect(OperatorTimeZone.zone(named: "Nowhere/Land") == .utc, "a stored name no longer known shows UTC")
        let options = OperatorTimeZone.optionsHTML(selected: "America/New_York").renderText
        #expect(options.components(separatedBy: "<option ").count - 1 == OperatorTimeZone.names.count)
        #expect(options.components(separatedBy: " selected>").count - 1 == 1)
        #expect(options.contains(#"<option value="America/New_York" selected>America/New York</option>"#))
        #expect(options.hasPrefix(#"<option value="UTC">UTC</option>"#))
    }

    @Test(
        """
        the Security page sets an operator's own zone (audited once, before and after; the same zone again \
        records nothing; an unknown one is 422 and changes nothing); pages then show and read times in it, \
        while another operator still sees UTC
        """
    )
    func settingThroughTheConsole() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            let managerID = try #require(env.fixture.principals[.backendManager]?.operatorID)
            let zoneOf = "SELECT time_zone FROM operators WHERE id = '\(managerID)'"
            try await env.withApp { client in
                let manager = try await ConsoleClient.signedIn(env, client, as: managerID)
                let security = try await manager.get("/console/security")
                #expect(security.text.contains(#"<option value="UTC" selected>"#))
                let csrf = try #require(security.csrf)
                let before = try await env.auditCount("operators.time_zone_set")
                for wrong in ["Europe/Berlín", "europe/berlin", "Nowhere/Land", ""] {
                    let refused = try await manager.post(
                        "/console/security/time-zone", ["time_zone": wrong], csrf: csrf)
                    #expect(refused.status == 422, "\(wrong)")
                    #expect(refused.text.contains(#"id="time_zone-error""#))
                }
                #expect(try await env.ownerScalar(zoneOf, as: String.self) == "UTC")
                #expect(try await env.auditCount("operators.time_zone_set") == before)

                for _ in 0..<2 {
                    let set = try await manager.post(
                        "/console/security/time-zone", ["time_zone": "Europe/Berlin"], csrf: csrf)
                    #expect(set.status == 303)
                }
                #expect(try await env.ownerScalar(zoneOf, as: String.self) == "Europe/Berlin")
                #expect(
                    try await env.auditCount("operators.time_zone_set") == before + 1, "the same zone again: no event")
                let change = try await env.ownerScalar(
                    """
                    SELECT before->>'time_zone' || ' → ' || (after->>'time_zone') FROM audit_events \
                    WHERE action = 'operators.time_zone_set' AND target_id = '\(managerID.text)'
                    """, as: String.self)
                #expect(change == "UTC → Europe/Berlin")

                let path = "/console/accounts/\(customer.id.text)"
                let page = try await manager.get(path)
                #expect(page.text.contains("Until (Europe/Berlin; empty: until unlocked)"))
                let skipped = try await manager.post(
                    "\(path)/lock", ["version": "\"1\"", "reason": "Chargebacks", "until": "2027-03-28T02:30"],
                    csrf: page.csrf)
                #expect(skipped.status == 422 && skipped.text.contains("the clocks skip it"))
                let locked = try await manager.post(
                    "\(path)/lock", ["version": "\"1\"", "reason": "Chargebacks", "until": "2027-03-28T03:30"],
                    csrf: page.csrf)
                #expect(locked.status == 303)
                let until = try await env.ownerScalar(
                    """
                    SELECT to_char(until AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') FROM account_locks \
                    WHERE customer_id = '\(customer.id.text)'
                    """, as: String.self)
                #expect(until == "2027-03-28 01:30", "read as Berlin summer time")
                let shown = try await manager.get(path)
                #expect(
                    shown.text.contains(
                        #"<time datetime="2027-03-28T01:30:00Z" title="2027-03-28 01:30:00 UTC">"#
                            + "2027-03-28 03:30 UTC+2</time>"
                    ))

                let auditor = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.auditor]?.operatorID)
                let seen = try await auditor.get(path)
                #expect(seen.status == 200)
                #expect(seen.text.contains(#"title="2027-03-28 01:30:00 UTC">2027-03-28 01:30 UTC</time>"#))
            }
        }
    }
}
