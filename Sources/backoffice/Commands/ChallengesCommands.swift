import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

extension Challenges {
    struct Create: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "A YAML or JSON challenge file (fields as the API's ChallengeDraft).") var file: String?
        @Option(help: "Name (at most 200 characters).") var name: String?
        @Option(help: "calories_burned, workout_minutes, distance_m, steps or lift.") var metric: String?
        @Option(help: "sum, max or count.") var aggregation: String?
        @Option(help: "RFC 3339 start of the window.") var startsAt: String?
        @Option(help: "RFC 3339 end of the window.") var endsAt: String?
        @Option(help: "ISO 8601 duration late events still count after the window (P2D, PT36H).") var gracePeriod:
            String?
        @Option(help: "all or subscribers.") var eligibility: String?
        @Option(help: "standard (1224), dense (1223) or earliest.") var tiePolicy: String?
        @Option(help: "A score that earns the target reward.") var target: Double?
        @Option(help: "FitPoints for reaching the target.") var targetPoints: Double?
        @Option(help: "A badge for reaching the target.") var targetBadge: String?
        @Option(help: "A rank band FROM-TO:POINTS[:BADGE] (repeatable).") var rank: [String] = []
        @Option(help: "FitPoints the challenge is given: all it can ever pay.") var budget: Double?
        @Option(help: "Why (a budget past policies/approvals.yaml's threshold waits for a second person's approval).")
        var reason: String?

        func draft() throws -> Components.Schemas.ChallengeDraft {
            var draft =
                try file.map { try readStructuredFile(Components.Schemas.ChallengeDraft.self, at: $0) }
                ?? Components.Schemas.ChallengeDraft(
                    name: "", metric: "", aggregation: "", startsAt: Date(), endsAt: Date(), budgetPoints: 0)
            if file == nil {
                guard let startsAt, let endsAt else {
                    throw CLIFailure.usage("error: give --file, or --starts-at and --ends-at with the other flags")
                }
                (draft.startsAt, draft.endsAt) = (
                    try parseTime(startsAt, "--starts-at")!, try parseTime(endsAt, "--ends-at")!
                )
            } else {
                if let startsAt { draft.startsAt = try parseTime(startsAt, "--starts-at")! }
                if let endsAt { draft.endsAt = try parseTime(endsAt, "--ends-at")! }
            }
            if let name { draft.name = name }
            if let metric { draft.metric = metric }
            if let aggregation { draft.aggregation = aggregation }
            if let gracePeriod { draft.gracePeriod = gracePeriod }
            if let eligibility { draft.eligibility = eligibility }
            if let tiePolicy { draft.tiePolicy = tiePolicy }
            if let target { draft.target = target }
            if let budget { draft.budgetPoints = budget }
            if let reason { draft.reason = reason }
            if !rank.isEmpty || targetPoints != nil {
                var rewards = draft.rewards ?? .init()
                if !rank.isEmpty { rewards.ranks = try rank.map(Self.band) }
                if let targetPoints { rewards.target = .init(points: targetPoints, badge: targetBadge) }
                draft.rewards = rewards
            }
            return draft
        }

        static func band(_ text: String) throws -> Components.Schemas.ChallengeRewardsDraft.RanksPayloadPayload {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            let range = parts.first?.split(separator: "-").compactMap { Double($0) } ?? []
            guard (2...3).contains(parts.count), range.count == 2, let points = Double(parts[1]) else {
                throw CLIFailure.usage(
                    "error: --rank must be FROM-TO:POINTS[:BADGE], e.g. 1-3:500:winter-champion; got '\(text)'")
            }
            return .init(from: range[0], to: range[1], points: points, badge: parts.count == 3 ? parts[2] : nil)
        }

        func run() async throws {
            try await global.show(.single(CLIColumns.challenge)) { client in
                try await client.createChallenge(
                    headers: .init(idempotencyKey: global.changeKey()), body: .json(try draft()))
            }
        }
    }
}
