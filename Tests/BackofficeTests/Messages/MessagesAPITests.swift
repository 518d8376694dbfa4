import BackofficeAPI
import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("System messages")
struct MessagesAPITests {
    func at(_ env: TestEnvironment, _ seconds: TimeInterval) -> String {
        RFC3339DateTranscoder.format(env.clock.now().addingTimeInterval(seconds))
    }

    @Test(
        """
        a maintenance notice published 2 h before its window is refused (notice_period_too_short) and changes \
        nothing; 25 h before is accepted
        """
    )
    func noticePeriod() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                let soon = try await client.call(
                    .post, "/v1/messages", token: manager,
                    json:
                        #"""
                        {"title":"Database upgrade","body":"**Short** outage","severity":"maintenance",\#
                        "window_starts_at":"\#(at(env, 2 * 3600))","window_ends_at":"\#(at(env, 3 * 3600))"}
                        """#
                )
                #expect(soon.status == 201)
                #expect(soon["state"] == "draft")
                let soonID = try #require(soon["id"])
                let message = {
                    try await env.ownerScalar(
                        "SELECT status || ' v' || version FROM system_messages WHERE id = '\(soonID)'", as: String.self)
                }
                let events = { try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) }
                let (messageBefore, eventsBefore) = (try await message(), try await events())
                let refused = try await client.call(.post, "/v1/messages/\(soonID)/publish", token: manager)
                #expect(refused.status == 422)
                #expect(refused["code"] == "notice_period_too_short")
                #expect(try await client.call(.get, "/v1/messages/\(soonID)", token: manager)["state"] == "draft")
                #expect(try await message() == messageBefore, "the message's status and version are unchanged")
                #expect(try await events() == eventsBefore, "nothing audited")

                let planned = try await client.call(
                    .post, "/v1/messages", token: manager,
                    json:
                        #"""
                        {"title":"Database upgrade","body":"Planned","severity":"maintenance",\#
                        "window_starts_at":"\#(at(env, 25 * 3600))","window_ends_at":"\#(at(env, 26 * 3600))"}
                        """#
                )
                let plannedID = try #require(planned["id"])
                let published = try await client.call(.post, "/v1/messages/\(plannedID)/publish", token: manager)
                #expect(published.status == 200)
                #expect(published["state"] == "published")
                let again = try await client.call(.post, "/v1/messages/\(plannedID)/publish", token: manager)
                #expect(again.status == 409)
                #expect(again["current_state"] == "published")
            }
            let publishes = try await env.ownerScalar(
                "SELECT count(*) FROM audit_events WHERE action = 'messages.publish'", as: Int.self)
            #expect(publishes == 1, "the refused publication left no trace but its problem")
        }
    }

    @Test("the app sees a message from publish_at until expires_at and not after, with no job moving it; ETag and 304")
    func visibleInItsWindow() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let created = try await client.call(
                    .post, "/v1/messages", token: manager,
                    json:
                        #"""
                        {"title":"New challenge","body":"Join **Winter Steps**","severity":"info",\#
                        "publish_at":"\#(at(env, 3600))","expires_at":"\#(at(env, 3 * 3600))"}
                        """#
                )
                let id = try #require(created["id"])
                let scheduled = try await client.call(.post, "/v1/messages/\(id)/publish", token: manager)
                #expect(scheduled["state"] == "scheduled")

                let before = try await client.call(.get, "/v1/messages/active", token: app)
                #expect(try before.decode(Components.Schemas.ActiveMessages.self).items.isEmpty)
                let emptyTag = try #require(before.headers[.init("ETag")!])
                let cached = try await client.call(
                    .get, "/v1/messages/active", token: app, headers: ["If-None-Match": emptyTag])
                #expect(cached.status == 304)
                #expect(cached.text.isEmpty)

                env.clock.advance(by: 3600)
                let showing = try await client.call(
                    .get, "/v1/messages/active", token: app, headers: ["If-None-Match": emptyTag])
                #expect(showing.status == 200, "the set changed: a new ETag, not 304")
                #expect(try showing.decode(Components.Schemas.ActiveMessages.self).items.map(\.id) == [id])
                #expect(showing.headers[.init("ETag")!] != emptyTag)
                #expect(try await client.call(.get, "/v1/messages/\(id)", token: manager)["state"] == "published")

                env.clock.advance(by: 2 * 3600)
                let after = try await client.call(.get, "/v1/messages/active", token: app)
                #expect(try after.decode(Components.Schemas.ActiveMessages.self).items.isEmpty)
                #expect(try await client.call(.get, "/v1/messages/\(id)", token: manager)["state"] == "expired")
                let late = try await client.call(
                    .post, "/v1/messages/\(id)/retract", token: manager, json: #"{"reason":"too late"}"#)
                #expect(late.status == 409)
                #expect(late["current_state"] == "expired")
            }
        }
    }

    @Test(
        """
        audiences: subscribers' messages show only to subscribers; a retracted message stops showing; bad drafts \
        are 422 naming the field
        """
    )
    func audiencesRetractionAndValidation() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                let created = try await client.call(
                    .post, "/v1/messages", token: manager,
                    json:
                        #"{"title":"Members' week","body":"Double points","severity":"info","audience":"subscribers"}"#)
                let id = try #require(created["id"])
                #expect(try await client.call(.post, "/v1/messages/\(id)/publish", token: manager).status == 200)
                let everyone = try await client.call(.get, "/v1/messages/active?audience=all", token: app)
                #expect(try everyone.decode(Components.Schemas.ActiveMessages.self).items.isEmpty)
                let subscribers = try await client.call(.get, "/v1/messages/active?audience=subscribers", token: app)
                #expect(try subscribers.decode(Components.Schemas.ActiveMessages.self).items.map(\.id) == [id])

                let noReason = try await client.call(.post, "/v1/messages/\(id)/retract", token: manager, json: #"{}"#)
                #expect(noReason.status == 422)
                let retracted = try await client.call(
                    .post, "/v1/messages/\(id)/retract", token: manager, json: #"{"reason":"sent by mistake"}"#)
                #expect(retracted["state"] == "retracted")
                let gone = try await client.call(.get, "/v1/messages/active?audience=subscribers", token: app)
                #expect(try gone.decode(Components.Schemas.ActiveMessages.self).items.isEmpty)

                let noWindow = try await client.call(
                    .post, "/v1/messages", token: manager, json: #"{"title":"x","body":"y","severity":"maintenance"}"#)
                #expect(noWindow.status == 422)
                #expect(noWindow.text.contains("window_starts_at"))
                let blank = try await client.call(
                    .post, "/v1/messages", token: manager, json: #"{"title":"  ","body":"y","severity":"info"}"#)
                #expect(blank.status == 422)
                #expect(blank.text.contains("\"title\""))
                #expect(
                    try await client.call(.get, "/v1/messages/active", token: manager).status == 403,
                    "the app's read is the app's")
                #expect(
                    try await client.call(
                        .post, "/v1/messages", token: app, json: #"{"title":"x","body":"y","severity":"info"}"#
                    ).status == 403)
            }
            let count = try await env.ownerScalar("SELECT count(*) FROM system_messages", as: Int.self)
            #expect(count == 1, "refused drafts were not stored")
        }
    }

    @Test("the message list is newest first and keyset-paginated; a forged cursor is 400")
    func paging() async throws {
        try await TestEnvironment.with { env in
            let manager = env.fixture.tokens[.backendManager]!
            try await env.withApp { client in
                var created: [String] = []
                for n in 1...3 {
                    env.clock.advance(by: 1)
                    let draft = try await client.call(
                        .post, "/v1/messages", token: manager,
                        json: #"{"title":"Note \#(n)","body":"b","severity":"info"}"#)
                    created.append(try #require(draft["id"]))
                }
                let first = try await client.call(.get, "/v1/messages?limit=2", token: manager)
                let page1 = try first.decode(Components.Schemas.MessagePage.self)
                let cursor = try #require(page1.nextCursor)
                let page2 = try await client.call(.get, "/v1/messages?limit=2&cursor=\(cursor)", token: manager).decode(
                    Components.Schemas.MessagePage.self)
                #expect((page1.items + page2.items).map(\.id) == created.reversed())
                #expect(page2.nextCursor == nil)
                #expect(
                    try await client.call(.get, "/v1/messages?cursor=bm90LWEtY3Vyc29y", token: manager).status == 400)
            }
        }
    }
}
