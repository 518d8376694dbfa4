import BackofficeAPI
import BackofficePlatform
import Foundation

extension Challenge {
    /// The contract's challenge, with its state at `now`.
    func api(at now: Date) throws -> Components.Schemas.Challenge {
        Components.Schemas.Challenge(
            id: id.text, name: name, description: description, metric: metric.rawValue,
            aggregation: try .init(known: aggregation.rawValue),
            state: try .init(known: state(at: now).rawValue), startsAt: startsAt, endsAt: endsAt,
            gracePeriod: gracePeriod, frozenAt: frozenAt,
            eligibility: try .init(known: eligibility.rawValue), target: target,
            tiePolicy: try .init(known: tiePolicy.rawValue),
            rewards: .init(
                ranks: rewards.ranks.map { .init(from: $0.from, to: $0.to, points: $0.points, badge: $0.badge) },
                target: rewards.target.map { .init(points: $0.points, badge: $0.badge) }),
            budgetPoints: budgetPoints, publishedAt: publishedAt, settledAt: settledAt, createdAt: createdAt,
            updatedAt: updatedAt, version: version)
    }
}

extension CreateChallenge.Draft {
    init(_ draft: Components.Schemas.ChallengeDraft) {
        self.init(
            name: draft.name, description: draft.description, metric: draft.metric, aggregation: draft.aggregation,
            startsAt: draft.startsAt,
            endsAt: draft.endsAt, gracePeriod: draft.gracePeriod, eligibility: draft.eligibility, target: draft.target,
            tiePolicy: draft.tiePolicy,
            rankBands: (draft.rewards?.ranks ?? []).map { ($0.from, $0.to, $0.points, $0.badge) },
            targetReward: draft.rewards?.target.map { ($0.points, $0.badge) }, budgetPoints: draft.budgetPoints,
            reason: draft.reason)
    }
}

extension Cursor {
    /// The standing a leaderboard page ends with: score, achievement time (µs) and customer.
    static func standing(_ cursor: String?) throws -> Ranking.Standing? {
        try decode(cursor, count: 3).map { parts in
            guard let score = Double(parts[0]), score.isFinite, let micros = Int64(parts[1]),
                let id = UUID(uuidString: parts[2])
            else {
                throw invalid
            }
            return Ranking.Standing(customerID: id, score: score, achievedAt: Cursor.time(micros))
        }
    }
}

extension APIHandler {
    func createChallenge(_ input: Operations.CreateChallenge.Input) async throws -> Operations.CreateChallenge.Output {
        let body: Components.Schemas.ChallengeDraft = try json(input.body)
        let created = try await changeUnlessHeld(
            CreateChallenge(.init(body)), body: body, status: 201
        ) { [now = self.now] in try $0.api(at: now) }
        switch created {
        case .done(let challenge):
            return .created(.init(headers: .init(eTag: EntityTag.of(challenge.version)), body: .json(challenge)))
        case .held(let request): return .accepted(.init(body: .json(request)))
        }
    }

    func listChallenges(_ input: Operations.ListChallenges.Input) async throws -> Operations.ListChallenges.Output {
        let (items, next) = try await newestFirst(limit: input.query.limit, cursor: input.query.cursor) {
            ListChallenges(after: $0, limit: $1)
        } answer: {
            try $0.api(at: now)
        }
        return .ok(.init(body: .json(.init(items: items, nextCursor: next))))
    }

    func getChallenge(_ input: Operations.GetChallenge.Input) async throws -> Operations.GetChallenge.Output {
        let challenge = try await read(GetChallenge(id: try parseID(input.path.challengeId, "challenge_id")))
        return .ok(
            .init(
                headers: .init(eTag: EntityTag.of(challenge.version)),
                body: .json(try challenge.api(at: now))))
    }

    func publishChallenge(_ input: Operations.PublishChallenge.Input) async throws -> Operations.PublishChallenge.Output
    {
        let id = try parseID(input.path.challengeId, "challenge_id")
        let challenge = try await change(
            PublishChallenge(challengeID: id, ifMatch: input.headers.ifMatch), on: id, body: String?.none
        ) { [now = self.now] in try $0.api(at: now) }
        return .ok(.init(headers: .init(eTag: EntityTag.of(challenge.version)), body: .json(challenge)))
    }

    func settleChallenge(_ input: Operations.SettleChallenge.Input) async throws -> Operations.SettleChallenge.Output {
        let id = try parseID(input.path.challengeId, "challenge_id")
        let body: Components.Schemas.SettleRequest? = if case .json(let body)? = input.body { body } else { nil }
        let settlement = try await change(
            SettleChallenge(challengeID: id, dryRun: body?.dryRun ?? false), on: id, body: body
        ) { [now = self.now] challenge, settlement in
            Components.Schemas.ChallengeSettlement(
                challenge: try challenge.api(at: now), dryRun: settlement.dryRun,
                settledAt: settlement.settledAt,
                participants: settlement.participants, budget: settlement.budget, paid: settlement.paid,
                shortfall: settlement.shortfall,
                payouts: settlement.payouts.map {
                    .init(
                        customerId: $0.customerID.text, rank: $0.rank, score: $0.score, points: $0.points,
                        badges: $0.badges)
                })
        }
        return .ok(.init(body: .json(settlement)))
    }

    func challengeLeaderboard(_ input: Operations.ChallengeLeaderboard.Input) async throws
        -> Operations.ChallengeLeaderboard.Output
    {
        let request = LeaderboardRequest(
            challengeID: input.path.challengeId, limit: input.query.limit, cursor: input.query.cursor)
        return .ok(.init(body: .json(try await request.run(database, context: try context()).api)))
    }
}
