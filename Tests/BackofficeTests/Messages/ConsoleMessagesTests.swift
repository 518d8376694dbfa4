import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite(
    "Console messages: compose, publish (the notice period refused in place), the calendar, retract with a confirmation"
)
struct ConsoleMessagesTests {
    /// `date` as a `datetime-local` field holds it (UTC).
    private func field(_ date: Date) -> String { ConsoleTime.field(date) }

    /// The id in a `/console/messages/{id}` redirect.
    private func messageID(_ reply: Reply) throws -> String {
        let location = try #require(reply.location, "a redirect")
        return String(location.dropFirst("/console/messages/".count))
    }

    @Test(
        """
        a maintenance notice 2 h before its window is refused in place (422, still a draft, nothing audited); a \
        copy 25 h before publishes, shows on the calendar, audited via console
        """
    )
    func maintenanceNoticePeriod() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let manager = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.backendManager]?.operatorID)
                let form = try await manager.get("/console/messages/new")
                #expect(form.status == 200)
                let now = env.clock.now()
                let refusedBlank = try await manager.post(
                    "/console/messages/new", ["title": "", "body": "Kept text", "severity": "info", "audience": "all"],
                    csrf: form.csrf)
                #expect(refusedBlank.status == 422)
                #expect(
                    refusedBlank.text.contains("id=\"title-error\"") && refusedBlank.text.contains("Kept text"),
                    "the input is kept")

                let soon = try await manager.post(
                    "/console/messages/new",
                    [
                        "title": "Scheduled maintenance", "body": "The app is read-only for an hour.",
                        "severity": "maintenance", "audience": "all",
                        "window_starts_at": field(now.addingTimeInterval(2 * 3600)),
                        "window_ends_at": field(now.addingTimeInterval(3 * 3600)),
                    ], csrf: form.csrf)
                #expect(soon.status == 303)
                let soonID = try messageID(soon)
                #expect(
                    soon.setCookies.contains { $0.hasPrefix("console_flash=Saved%20as%20a%20draft") },
                    "a flash for the next page")
                let page = try await manager.get("/console/messages/\(soonID)")
                #expect(page.text.contains("<span class=\"tag draft\">draft</span>"))
                let published = try await env.auditCount("messages.publish")
                let refused = try await manager.post(
                    "/console/messages/\(soonID)/publish", ["version": try #require(page.text.version)], csrf: page.csrf
                )
                #expect(refused.status == 422)
                #expect(
                    refused.text.contains("at least 24 h before its window starts"), "the policy's reason, in place")
                #expect(refused.text.contains("id=\"window-error\""), "next to the window")
                #expect(refused.text.contains("/console/messages/new?copy=\(soonID)"), "offers a copy to change it")
                let status = try await env.ownerScalar(
                    "SELECT status FROM system_messages WHERE id = '\(soonID)'", as: String.self)
                #expect(status == "draft")
                #expect(try await env.auditCount("messages.publish") == published)

                let copy = try await manager.get("/console/messages/new?copy=\(soonID)")
                #expect(copy.text.contains("value=\"Scheduled maintenance\""), "the copy is filled in")
                let later = try await manager.post(
                    "/console/messages/new",
                    [
                        "title": "Scheduled maintenance", "body": "The app is read-only for an hour.",
                        "severity": "maintenance", "audience": "all",
                        "window_starts_at": field(now.addingTimeInterval(25 * 3600)),
                        "window_ends_at": field(now.addingTimeInterval(26 * 3600)),
                    ], csrf: copy.csrf)
                let laterID = try messageID(later)
                let laterPage = try await manager.get("/console/messages/\(laterID)")
                let done = try await manager.post(
                    "/console/messages/\(laterID)/publish", ["version": try #require(laterPage.text.version)],
                    csrf: laterPage.csrf)
                #expect(done.status == 303)
                #expect(
                    done.setCookies.contains {
                        $0.hasPrefix("console_flash=Published%3A%20the%20message%20is%20published")
                    })
                #expect(
                    try await env.ownerScalar(
                        "SELECT status FROM system_messages WHERE id = '\(laterID)'", as: String.self) == "published")
                let viaConsole = try await env.ownerScalar(
                    """
                    SELECT count(*) FROM audit_events WHERE action = 'messages.publish' AND target_id = \
                    '\(laterID)' AND session_id IS NOT NULL
                    """,
                    as: Int64.self)
                #expect(viaConsole == 1)
                let list = try await manager.get("/console/messages")
                #expect(list.status == 200)
                let calendar = try #require(
                    list.text.after(last: "<table class=\"calendar\">")?.components(separatedBy: "</table>").first)
                #expect(calendar.contains("/console/messages/\(laterID)"), "the published notice is on the calendar")
                #expect(!calendar.contains("/console/messages/\(soonID)"), "the draft is not")
            }
        }
    }

    @Test(
        """
        retracting needs a reason and a ticked confirmation (422, nothing changed); a partner has no messages \
        section (403)
        """
    )
    func retractAndPolicy() async throws {
        try await TestEnvironment.with { env in
            try await env.withApp { client in
                let manager = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.backendManager]?.operatorID)
                let form = try await manager.get("/console/messages/new")
                let created = try await manager.post(
                    "/console/messages/new",
                    ["title": "New challenges", "body": "Try them.", "severity": "info", "audience": "all"],
                    csrf: form.csrf)
                let id = try messageID(created)
                var page = try await manager.get("/console/messages/\(id)")
                _ = try await manager.post(
                    "/console/messages/\(id)/publish", ["version": try #require(page.text.version)], csrf: page.csrf)
                page = try await manager.get("/console/messages/\(id)")
                let version = try #require(page.text.version)
                let unconfirmed = try await manager.post(
                    "/console/messages/\(id)/retract", ["version": version, "reason": "Sent too early"], csrf: page.csrf
                )
                #expect(unconfirmed.status == 422 && unconfirmed.text.contains("id=\"confirm_retract-error\""))
                let noReason = try await manager.post(
                    "/console/messages/\(id)/retract", ["version": version, "confirm": "yes"], csrf: page.csrf)
                #expect(noReason.status == 422)
                #expect(
                    try await env.ownerScalar("SELECT status FROM system_messages WHERE id = '\(id)'", as: String.self)
                        == "published")
                let retracted = try await manager.post(
                    "/console/messages/\(id)/retract",
                    ["version": version, "confirm": "yes", "reason": "Sent too early"], csrf: page.csrf)
                #expect(retracted.status == 303)
                #expect(
                    try await env.ownerScalar("SELECT status FROM system_messages WHERE id = '\(id)'", as: String.self)
                        == "retracted")

                let partner = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.partners[0].admin.operatorID)
                #expect(
                    !(try await partner.get("/console/home").text.contains("/console/messages")),
                    "not in its navigation")
                #expect(try await partner.get("/console/messages").status == 403)
            }
        }
    }
}

extension String {
    /// The form's hidden `version` (the `If-Match` it carries).
    var version: String? {
        guard let range = range(of: "name=\"version\" value=\"") else { return nil }
        return String(self[range.upperBound...].prefix { $0 != "\"" }).replacingOccurrences(of: "&quot;", with: "\"")
            .replacingOccurrences(
                of: "&#34;", with: "\"")
    }
}
