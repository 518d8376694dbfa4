import BackofficePlatform
import Foundation

/// How often a plan renews.
package enum BillingInterval: String, Sendable, CaseIterable {
    case month
    case year

    /// Months in one period.
    package var months: Int { self == .month ? 1 : 12 }
}

/// A plan a customer may subscribe to (`policies/billing/plans.yaml`): its price in US cents for
/// one period of `interval`.
package struct BillingPlan: Sendable, Equatable {
    package let id: String
    package let name: String
    package let priceCents: Int64
    package let interval: BillingInterval
}

/// Subscription billing's rules (`policies/billing/plans.yaml`), validated at start-up: the plans,
/// the free trial, the notice a price change needs, and when a declined renewal is retried.
package struct BillingPolicy: DomainPolicy {
    /// The plans, ordered by id.
    package let plans: [BillingPlan]
    /// Days of a customer's one free trial (0: none).
    package let trialDays: Int
    /// Days a customer is told of a new price before the renewal it applies from.
    package let priceChangeNoticeDays: Int
    /// Days after a renewal's first decline when it is tried again, increasing; after the last,
    /// the subscription lapses.
    package let retryAfterDays: [Int]

    package static let file = "billing/plans.yaml"

    package static func files(in directory: URL) -> [String] { [file] }

    /// The plan named `id`, if the policy has it.
    package func plan(_ id: String) -> BillingPlan? { plans.first { $0.id == id } }

    package static func parse(_ texts: [String: String], directory: String) throws -> BillingPolicy {
        let document = try PolicyDocument(texts, file, directory: directory)
        return BillingPolicy(
            plans: try plans(document),
            trialDays: try document.integer("trial", "days", 0...90),
            priceChangeNoticeDays: try document.integer("price_change", "notice_days", 0...365),
            retryAfterDays: try retries(document))
    }

    /// `plans`: at least one; each id lower-case letters, digits and `_` (at most 32), a name of
    /// 1–80 characters, a price of 1 cent to $10,000, an interval of `month` or `year`.
    private static func plans(_ document: PolicyDocument) throws -> [BillingPlan] {
        func refuse(_ entry: String, _ problem: String) -> PolicyError {
            PolicyError(file: document.file, entry: entry, problem: problem)
        }
        guard let entries = document.values["plans"] as? [String: Any], !entries.isEmpty else {
            throw refuse("plans", "must name at least one plan")
        }
        var plans: [BillingPlan] = []
        for (id, value) in entries.sorted(by: { $0.key < $1.key }) {
            guard (1...32).contains(id.count),
                id.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_") })
            else { throw refuse("plans.\(id)", "a plan's id is 1–32 lower-case letters, digits or _") }
            guard let fields = value as? [String: Any] else { throw refuse("plans.\(id)", "must be a mapping") }
            guard let name = fields["name"] as? String, (1...80).contains(name.count) else {
                throw refuse("plans.\(id).name", "must be a name of 1–80 characters")
            }
            guard let price = fields["price_cents"] as? Int, (1...1_000_000).contains(price) else {
                throw refuse("plans.\(id).price_cents", "must be a whole number of cents from 1 to 1000000")
            }
            guard let text = fields["interval"] as? String, let interval = BillingInterval(rawValue: text) else {
                throw refuse("plans.\(id).interval", "must be month or year")
            }
            plans.append(BillingPlan(id: id, name: name, priceCents: Int64(price), interval: interval))
        }
        return plans
    }

    /// `dunning.retry_after_days`: 1–10 whole days from 1 to 60, each later than the one before.
    private static func retries(_ document: PolicyDocument) throws -> [Int] {
        let entry = "dunning.retry_after_days"
        guard let days = (document.values["dunning"] as? [String: Any])?["retry_after_days"] as? [Int],
            (1...10).contains(days.count), days.allSatisfy({ (1...60).contains($0) }),
            zip(days, days.dropFirst()).allSatisfy({ $0 < $1 })
        else {
            throw PolicyError(
                file: document.file, entry: entry,
                problem: "must list 1 to 10 days from 1 to 60, each later than the last")
        }
        return days
    }
}

extension PolicySet {
    /// Subscription billing's plans and rules.
    package var billing: BillingPolicy { self[BillingPolicy.self] }
}

extension Validation {
    /// The plan `id` of `billing`; an unknown one is recorded as `plan: unknown_plan`, naming those there are.
    mutating func plan(_ id: String, of billing: BillingPolicy) -> BillingPlan? {
        let plan = billing.plan(id)
        require(plan != nil, "plan", "unknown_plan", "one of \(billing.plans.map(\.id).joined(separator: ", "))")
        return plan
    }

    /// A payment method must be the provider's token (`pm_…`): a card number is recorded as
    /// `payment_method: invalid`.
    mutating func paymentMethod(_ token: String) {
        require(
            PaymentCharge.isPaymentMethod(token), "payment_method", "invalid",
            "the provider's token for a saved payment method (pm_…), never card data")
    }
}
