import Foundation

/// A draft as an approval request holds it (JSON): its rank bands and target reward as objects.
extension CreateChallenge.Draft: Codable {
    private struct Band: Codable { let from: Double, to: Double, points: Double, badge: String? }
    private struct Reward: Codable { let points: Double, badge: String? }
    private enum CodingKeys: String, CodingKey {
        case name, description, metric, aggregation, startsAt, endsAt, gracePeriod, eligibility, target, tiePolicy
        case rankBands, targetReward, budgetPoints, reason
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            name: try c.decode(String.self, forKey: .name),
            description: try c.decodeIfPresent(String.self, forKey: .description),
            metric: try c.decode(String.self, forKey: .metric),
            aggregation: try c.decode(String.self, forKey: .aggregation),
            startsAt: try c.decode(Date.self, forKey: .startsAt), endsAt: try c.decode(Date.self, forKey: .endsAt),
            gracePeriod: try c.decodeIfPresent(String.self, forKey: .gracePeriod),
            eligibility: try c.decodeIfPresent(String.self, forKey: .eligibility),
            target: try c.decodeIfPresent(Double.self, forKey: .target),
            tiePolicy: try c.decodeIfPresent(String.self, forKey: .tiePolicy),
            rankBands: try c.decode([Band].self, forKey: .rankBands).map { ($0.from, $0.to, $0.points, $0.badge) },
            targetReward: try c.decodeIfPresent(Reward.self, forKey: .targetReward).map { ($0.points, $0.badge) },
            budgetPoints: try c.decode(Double.self, forKey: .budgetPoints),
            reason: try c.decodeIfPresent(String.self, forKey: .reason))
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encodeIfPresent(description, forKey: .description)
        try c.encode(metric, forKey: .metric)
        try c.encode(aggregation, forKey: .aggregation)
        try c.encode(startsAt, forKey: .startsAt)
        try c.encode(endsAt, forKey: .endsAt)
        try c.encodeIfPresent(gracePeriod, forKey: .gracePeriod)
        try c.encodeIfPresent(eligibility, forKey: .eligibility)
        try c.encodeIfPresent(target, forKey: .target)
        try c.encodeIfPresent(tiePolicy, forKey: .tiePolicy)
        try c.encode(
            rankBands.map { Band(from: $0.from, to: $0.to, points: $0.points, badge: $0.badge) }, forKey: .rankBands)
        try c.encodeIfPresent(targetReward.map { Reward(points: $0.points, badge: $0.badge) }, forKey: .targetReward)
        try c.encode(budgetPoints, forKey: .budgetPoints)
        try c.encodeIfPresent(reason, forKey: .reason)
    }
}
