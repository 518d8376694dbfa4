import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Console health profile: the purpose asked once per session, each opening recorded, the chart and its table")
struct ConsoleHealthProfilesTests {
    @Test(
        """
        a manager is asked why before anything is read; after answering, each opening records one access event \
        with that purpose and via console, never a second question; the weight chart's table holds the values \
        plotted; "who read" lists the reads; another session is asked again; an auditor sees ranges and no chart
        """
    )
    func purposeOncePerSession() async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer("weigh.me@example.com")
            let accesses: @Sendable () async throws -> Int64 = { try await HealthProfilesAPITests.accesses(env) }
            try await env.withApp { client in
                for body in [
                    HealthProfilesAPITests.profile,
                    HealthProfilesAPITests.profile.replacingOccurrences(of: "72.5", with: "70.1"),
                ] {
                    #expect(try await HealthProfilesAPITests.sync(client, env, customer, body).status == 200)
                }
                let managerID = env.fixture.principals[.backendManager]?.operatorID
                let manager = try await ConsoleClient.signedIn(env, client, as: managerID)
                let path = "/console/accounts/\(customer.id.text)/health"
                let account = try await manager.get("/console/accounts/\(customer.id.text)")
                #expect(account.text.contains("href=\"\(path)\""), "the account page links the profile")

                let asked = try await manager.get(path)
                #expect(asked.status == 200 && asked.text.contains("id=\"purpose-form\""))
                #expect(!asked.text.contains("168 cm"), "nothing is read before the purpose")
                #expect(try await accesses() == 0)
                let none = try await manager.post("\(path)/purpose", [:], csrf: asked.csrf)
                #expect(none.status == 422 && none.text.contains("id=\"purpose-error\""))
                let stated = try await manager.post("\(path)/purpose", ["purpose": "support_request"], csrf: asked.csrf)
                #expect(stated.status == 303 && stated.location == path)

                let first = try await manager.get(path)
                #expect(first.status == 200 && first.text.contains("168 cm") && first.text.contains("70.1 kg"))
                #expect(first.text.contains("<svg class=\"chart\"") && first.text.contains("role=\"img\""))
                let table = try #require(first.text.after(last: "<table id=\"weights\">"))
                #expect(table.contains("<td>72.5</td>") && table.contains("<td>70.1</td>"), "the plotted values")
                #expect(try await accesses() == 1, "one opening, one event")
                let second = try await manager.get(path)
                #expect(!second.text.contains("id=\"purpose-form\""), "not asked twice in one session")
                #expect(try await accesses() == 2, "the second opening is a second event")
                let recorded = try await env.ownerScalar(
                    "SELECT string_agg(DISTINCT purpose || '/' || via, ',') FROM health_access_events",
                    as: String.self)
                #expect(recorded == "support_request/console")
                let who = try #require(second.text.after(last: "<table id=\"accesses\">"))
                #expect(who.contains("A support request from the customer") && who.contains("console"))

                let other = try await ConsoleClient.signedIn(env, client, as: managerID)
                #expect(try await other.get(path).text.contains("id=\"purpose-form\""), "another session is asked")

                let auditor = try await ConsoleClient.signedIn(
                    env, client, as: env.fixture.principals[.auditor]?.operatorID)
                let form = try await auditor.get(path)
                _ = try await auditor.post("\(path)/purpose", ["purpose": "audit"], csrf: form.csrf)
                let masked = try await auditor.get(path)
                #expect(masked.text.contains("160–169 cm") && !masked.text.contains("168 cm"), "ranges")
                #expect(!masked.text.contains("<svg") && !masked.text.contains("70.1"), "no chart, no weight")
                #expect(try await accesses() == 3)
            }
        }
    }

    @Test("the chart's scale: round ticks enclosing every point; one point and none drawn without failing")
    func chart() {
        let day = Date(timeIntervalSince1970: 1_780_272_000)
        let points = [(0, 725), (7, 719), (14, 701)].map {
            HealthProfile.WeightPoint(at: day.addingTimeInterval(Double($0) * 86_400), weightHG: $1)
        }
        let scale = WeightChart.Scale(kilograms: [72.5, 71.9, 70.1])
        #expect(scale.step == 1 && scale.ticks == [70, 71, 72, 73], "\(scale)")
        let wide = WeightChart.Scale(kilograms: [58, 104])
        #expect(wide.step == 10 && wide.ticks == [50, 60, 70, 80, 90, 100, 110])
        let chart = WeightChart(points: points)
        #expect(chart.rows.map { $0["kg"] } == ["72.5", "71.9", "70.1"], "the table's values are the points'")
        #expect(chart.svg.text.contains("points=\"56,") && chart.svg.text.contains("<circle"))
        #expect(chart.summary == "3 weights from 72.5 kg on 2026-06-01 to 70.1 kg on 2026-06-15.")
        let single = WeightChart(points: [points[0]])
        #expect(single.svg.text.contains("cx=\"340\""), "one point in the middle")
        #expect(WeightChart(points: []).svg == .empty && WeightChart(points: []).summary == "No weights recorded.")
    }
}
