import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

extension Recommendations {
    /// The fields a recommendation is written with.
    struct Fields: ParsableArguments {
        @Option(help: "exercise or nutrition.") var kind: Components.Schemas.RecommendationKind
        @Option(help: "The title.") var title: String
        @Option(help: "A Markdown file with the body.") var bodyFile: String
        @Option(help: "A subscription state it is for (none, active, lapsed); repeat for more; none given: any.")
        var subscription: [Components.Schemas.SubscriptionState] = []
        @Option(help: "An age band from the health profile (under_18, 18_29, 30_44, 45_59, 60_plus); repeat for more.")
        var ageBand: [Components.Schemas.AgeBand] = []
        @Option(help: "A sex from the health profile; repeat for more.") var sex: [Components.Schemas.Sex] = []
        @Option(help: "A weight goal from the health profile; repeat for more.")
        var weightGoal: [Components.Schemas.WeightGoal] = []
        @Option(help: "An activity level from the health profile; repeat for more.")
        var activityLevel: [Components.Schemas.ActivityLevel] = []
        @Option(help: "Content it features, video:<id>, recipe:<id> or article:<id> (live); repeat for more, up to 10.")
        var feature: [String] = []
        @Option(help: "RFC 3339 time it shows from (default: when published).") var validFrom: String?
        @Option(help: "RFC 3339 time it shows until (default: until retracted).") var validUntil: String?

        func draft() throws -> Components.Schemas.RecommendationDraft {
            .init(
                kind: kind, title: title, body: try readTextFile(bodyFile),
                audience: .init(
                    subscriptions: subscription, ageBands: ageBand, sexes: sex, weightGoals: weightGoal,
                    activityLevels: activityLevel),
                featured: feature.isEmpty ? nil : feature, validFrom: try parseTime(validFrom, "valid_from"),
                validUntil: try parseTime(validUntil, "valid_until"))
        }
    }

    struct Create: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @OptionGroup(title: "Fields") var fields: Fields

        func run() async throws {
            try await global.show(.single(CLIColumns.recommendation)) { client in
                try await client.createRecommendation(
                    headers: .init(idempotencyKey: global.changeKey()), body: .json(try fields.draft()))
            }
        }
    }

    struct Update: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Recommendation id.") var id: String
        @OptionGroup(title: "Fields") var fields: Fields
        @Option(help: "Only if it is still at this version (its ETag).") var ifMatch: String?

        func run() async throws {
            try await global.show(.single(CLIColumns.recommendation)) { client in
                let draft = try fields.draft()
                let version = try await currentVersion(
                    ifMatch, await client.getRecommendation(path: .init(recommendationId: id)))
                return try await client.updateRecommendation(
                    path: .init(recommendationId: id),
                    headers: .init(idempotencyKey: global.changeKey(), ifMatch: version), body: .json(draft))
            }
        }
    }
}
