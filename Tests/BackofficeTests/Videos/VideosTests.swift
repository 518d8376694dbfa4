import BackofficeAPI
import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Workout videos: review, the policy's categories and CDN, each customer's calories, premium for subscribers")
struct VideosTests {
    /// Worked examples with the Compendium of Physical Activities' MET values (2011): kcal = MET × kg × h.
    @Test(
        """
        the catalog's figure for 70 kg against worked examples: running 6 mph (12050, 9.8 MET) 30 min = 343 kcal, \
        hatha yoga (02150, 2.5) 60 min = 175, vigorous weight lifting (02050, 6.0) 45 min = 315, stationary \
        cycling 100 W (02011, 6.8) 20 min = 158.7; each shown to 10 kcal
        """
    )
    func workedExamples() {
        for (met, minutes, exact, shown) in [
            (9.8, 30, 343.0, 340), (2.5, 60, 175.0, 180), (6.0, 45, 315.0, 320), (6.8, 20, 158.67, 160),
        ] {
            #expect(abs(MET.kilocalories(met: met, bodyMassKg: 70, hours: Double(minutes) / 60) - exact) < 0.01)
            let content = VideosTests.content(trainer: UUID(), met: met, seconds: minutes * 60)
            #expect(content.typicalKilocalories == shown, "\(met) MET × \(minutes) min")
        }
    }

    static func content(trainer: UUID, met: Double = 9.8, seconds: Int = 1800, premium: Bool = false) -> VideoContent {
        VideoContent(
            title: "Treadmill intervals", description: "Eight rounds.", category: "treadmill", trainerID: trainer,
            trainerName: "Sam Rivera", durationSeconds: seconds, level: .intermediate, equipment: ["treadmill"],
            videoURL: "https://cdn.healthtrack.example/v/intervals/master.m3u8", coverURL: nil, met: met,
            premium: premium)
    }

    static func draft(trainer: String, _ changes: [String: String] = [:]) -> String {
        var fields = [
            "title": #""Treadmill intervals""#, "description": #""Eight rounds.""#, "category": #""treadmill""#,
            "trainer_id": "\"\(trainer)\"", "trainer_name": #""Sam Rivera""#, "duration_seconds": "1800",
            "level": #""intermediate""#, "met": "9.8", "premium": "true",
            "video_url": #""https://cdn.healthtrack.example/v/intervals/master.m3u8""#,
        ]
        fields.merge(changes) { $1 }
        return "{" + fields.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
    }

    @Test(
        """
        a video's category and host are the policy's, its address an .m3u8 or .mp4 over https, its trainer an \
        active expert: each refused by name (422), nothing stored; an expert writes and submits, a manager approves
        """
    )
    func rulesAndReview() async throws {
        try await TestEnvironment.with { env in
            let (expert, manager) = (env.fixture.tokens[.expert]!, env.fixture.tokens[.backendManager]!)
            let trainer = try #require(env.fixture.principals[.expert]?.operatorID).text
            let managerID = try #require(env.fixture.principals[.backendManager]?.operatorID).text
            try await env.withApp { client in
                for (changes, field) in [
                    (["category": #""juggling""#], "category"),
                    (["video_url": #""https://evil.example/v.m3u8""#], "video_url"),
                    (["video_url": #""http://cdn.healthtrack.example/v.mp4""#], "video_url"),
                    (["video_url": #""https://cdn.healthtrack.example/v.avi""#], "video_url"),
                    (["met": "30"], "met"),
                    (["trainer_id": "\"\(managerID)\""], "trainer_id"),
                ] {
                    let refused = try await client.call(
                        .post, "/v1/videos", token: expert, json: Self.draft(trainer: trainer, changes))
                    #expect(
                        refused.status == 422 && refused.text.contains("\"\(field)\""), "\(changes): \(refused.text)")
                }
                #expect(
                    (try await client.call(.get, "/v1/videos", token: manager).json["items"] as? [Any])?.isEmpty == true
                )
                let created = try await client.call(
                    .post, "/v1/videos", token: expert, json: Self.draft(trainer: trainer))
                #expect(created.status == 201 && created.json["typical_kcal"] as? Int == 340, "\(created.text)")
                let id = try #require(created["id"])
                #expect(try await client.call(.post, "/v1/videos/\(id)/submit", token: expert)["state"] == "in_review")
                #expect(try await client.call(.post, "/v1/videos/\(id)/approve", token: expert).status == 403)
                #expect(
                    try await client.call(.post, "/v1/videos/\(id)/approve", token: manager)["state"] == "published")
            }
        }
    }

    @Test(
        """
        the app reads each customer's own estimate, computed in the database from their latest weight (80 kg: \
        392 → about 390 kcal; none without a profile; a new weight changes it and the ETag), nothing added to the \
        access log; a premium video plays only for a subscriber (no address otherwise); 404 for an unknown \
        customer; managers and partners may not read it (403)
        """
    )
    func forCustomer() async throws {
        try await TestEnvironment.with { env in
            let (expert, manager) = (env.fixture.tokens[.expert]!, env.fixture.tokens[.backendManager]!)
            let app = env.fixture.tokens[.appService]!
            let trainer = try #require(env.fixture.principals[.expert]?.operatorID).text
            let subscriber = try await SubscribeTests.returningCustomer(env)
            _ = try await env.database.runStaged(
                Subscribe(
                    customerID: subscriber.id, planID: "monthly", paymentMethod: SimulatedPaymentGateway.approvedMethod,
                    payments: SimulatedPaymentGateway()), context: env.context(.appService))
            let other = try await env.customer()
            try await env.withApp { client in
                let id = try #require(
                    try await client.call(.post, "/v1/videos", token: expert, json: Self.draft(trainer: trainer))["id"])
                _ = try await client.call(.post, "/v1/videos/\(id)/submit", token: expert)
                _ = try await client.call(.post, "/v1/videos/\(id)/approve", token: manager)
                let profile = HealthProfilesAPITests.profile.replacingOccurrences(of: "72.5", with: "80")
                #expect(try await HealthProfilesAPITests.sync(client, env, subscriber, profile).status == 200)
                let accesses = try await HealthProfilesAPITests.accesses(env)

                let path = "/v1/customers/\(subscriber.id.text)/videos/\(id)"
                let mine = try await client.call(.get, path, token: app)
                #expect(mine.status == 200, "\(mine.text)")
                #expect(mine.json["kcal_estimate"] as? Int == 390 && mine.json["typical_kcal"] as? Int == 340)
                #expect(mine.json["plays"] as? Bool == true && mine["video_url"] != nil)
                #expect(
                    !mine.json.keys.contains { $0.contains("weight") }
                        && !mine.json.values.contains { $0 as? Int == 80 },
                    "no health value in the answer: \(mine.text)")
                let tag = try #require(mine.headers[.eTag])
                #expect(try await client.call(.get, path, token: app, headers: ["If-None-Match": tag]).status == 304)
                #expect(try await HealthProfilesAPITests.accesses(env) == accesses, "the app's read is no person's")

                let heavier = profile.replacingOccurrences(of: #""weight_kg":80"#, with: #""weight_kg":90"#)
                #expect(try await HealthProfilesAPITests.sync(client, env, subscriber, heavier).status == 200)
                let after = try await client.call(.get, path, token: app, headers: ["If-None-Match": tag])
                #expect(after.status == 200 && after.json["kcal_estimate"] as? Int == 440, "\(after.text)")

                let locked = try await client.call(.get, "/v1/customers/\(other.id.text)/videos", token: app)
                let item = try #require((locked.json["items"] as? [[String: Any]])?.first, "\(locked.text)")
                #expect(item["plays"] as? Bool == false && item["video_url"] == nil && item["kcal_estimate"] == nil)
                #expect(
                    try await client.call(.get, "/v1/customers/\(UUID().uuidString)/videos", token: app).status == 404)
                #expect(try await client.call(.get, path, token: manager).status == 403)
                let partner = env.fixture.partners[0].adminToken
                #expect(try await client.call(.get, path, token: partner).status == 403)
            }
        }
    }
}
