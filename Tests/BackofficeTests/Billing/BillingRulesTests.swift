import Foundation
import Testing

@testable import Backoffice
@testable import BackofficePlatform

@Suite("Billing's policy: the plans and their rules, validated at start-up; billing periods")
struct BillingPolicyTests {
    static let valid = """
        plans:
          monthly: {name: "Premium, monthly", price_cents: 999, interval: month}
          annual: {name: "Premium, annual", price_cents: 9588, interval: year}
        trial: {days: 7}
        price_change: {notice_days: 30}
        dunning: {retry_after_days: [1, 3, 5, 7]}
        """

    static func parse(_ text: String) throws -> BillingPolicy {
        try BillingPolicy.parse([BillingPolicy.file: text], directory: "policies")
    }

    @Test("the repository's file: the monthly plan at 999 cents, an annual plan, a 30-day notice, four retries")
    func repositoryFile() throws {
        let policies = try PolicySet.load(from: URL(fileURLWithPath: "\(CodeShapeTests.root)/policies"))
        let billing = policies.billing
        #expect(
            billing.plan("monthly")
                == BillingPlan(
                    id: "monthly", name: "HealthTrack Premium, monthly",
                    priceCents: 999, interval: .month))
        #expect(billing.plan("annual")?.interval == .year)
        #expect(billing.priceChangeNoticeDays == 30 && billing.retryAfterDays == [1, 3, 5, 7])
        #expect(billing.plan("weekly") == nil)
    }

    @Test("a file that breaks a rule is refused, naming the file and the entry")
    func refusals() throws {
        #expect(try Self.parse(Self.valid).plans.map(\.id) == ["annual", "monthly"])
        let broken: [(String, String, String)] = [
            ("price_cents: 999", "price_cents: 0", "plans.monthly.price_cents"),
            ("price_cents: 999", "price_cents: 9.99", "plans.monthly.price_cents"),
            ("interval: month", "interval: week", "plans.monthly.interval"),
            ("monthly:", "Monthly:", "plans.Monthly"),
            ("name: \"Premium, monthly\"", "name: \"\"", "plans.monthly.name"),
            ("[1, 3, 5, 7]", "[1, 5, 3, 7]", "dunning.retry_after_days"),
            ("[1, 3, 5, 7]", "[]", "dunning.retry_after_days"),
            ("[1, 3, 5, 7]", "[0, 3]", "dunning.retry_after_days"),
            ("{days: 7}", "{days: -1}", "trial.days"),
            ("{notice_days: 30}", "{notice_days: 1000}", "price_change.notice_days"),
        ]
        for (from, to, entry) in broken {
            let text = Self.valid.replacingOccurrences(of: from, with: to)
            #expect(text != Self.valid, "\(from) not in the valid file")
            #expect {
                try Self.parse(text)
            } throws: { error in
                let refusal = error as? PolicyError
                return refusal?.file == "policies/billing/plans.yaml" && refusal?.entry == entry
            }
        }
        #expect(throws: PolicyError.self) { try Self.parse("plans: {}\ntrial: {days: 0}") }
        #expect(throws: PolicyError.self) { try Self.parse("- not a mapping") }
    }

    @Test("periods start on the anchor's day, or the month's last when it is shorter, at the anchor's time, in UTC")
    func periods() throws {
        func date(_ text: String) throws -> Date { try #require(ISO8601DateFormatter().date(from: text)) }
        let monthly = BillingCycle(anchor: try date("2026-01-31T10:15:00Z"), interval: .month)
        let starts = try [
            "2026-01-31T10:15:00Z", "2026-02-28T10:15:00Z", "2026-03-31T10:15:00Z",
            "2026-04-30T10:15:00Z", "2026-12-31T10:15:00Z", "2027-01-31T10:15:00Z", "2028-02-29T10:15:00Z",
        ]
        .map(date)
        let numbers = [0, 1, 2, 3, 11, 12, 25]
        for (number, start) in zip(numbers, starts) {
            #expect(monthly.start(ofPeriod: number) == start, "period \(number)")
        }
        #expect(monthly.period(1) == starts[1]..<starts[2])
        let leap = BillingCycle(anchor: try date("2028-02-29T00:00:00Z"), interval: .year)
        #expect(leap.start(ofPeriod: 1) == (try date("2029-02-28T00:00:00Z")))
        #expect(leap.start(ofPeriod: 4) == (try date("2032-02-29T00:00:00Z")))
        // Every period of ten years of monthly renewals is 28 to 31 days long, and they follow one another.
        for number in 0..<120 {
            let days = monthly.period(number).upperBound.timeIntervalSince(monthly.period(number).lowerBound) / 86_400
            #expect((28...31).contains(Int(days)) && days == days.rounded(), "period \(number): \(days) days")
        }
    }
}

@Suite("Proration to the cent")
struct ProrationTests {
    static let start = Date(timeIntervalSince1970: 1_775_001_600)  // 2026-04-01T00:00:00Z
    static let month = start..<start.addingTimeInterval(30 * 86_400)

    @Test("what is left of a period: exact thirds, a half to the even cent, all before it, nothing after")
    func unused() {
        let day = 86_400.0
        #expect(Proration.unused(999, of: Self.month, at: Self.start.addingTimeInterval(10 * day)) == 666)
        #expect(Proration.unused(999, of: Self.month, at: Self.start.addingTimeInterval(20 * day)) == 333)
        #expect(Proration.unused(999, of: Self.month, at: Self.start.addingTimeInterval(15 * day)) == 500, "499.5")
        #expect(Proration.unused(997, of: Self.month, at: Self.start.addingTimeInterval(15 * day)) == 498, "498.5")
        #expect(Proration.unused(999, of: Self.month, at: Self.start.addingTimeInterval(-day)) == 999)
        #expect(Proration.unused(999, of: Self.month, at: Self.month.upperBound.addingTimeInterval(day)) == 0)
        #expect(Proration.unused(999, of: Self.start..<Self.start, at: Self.start) == 0)
        #expect(Proration.rounded(5, dividedBy: 2) == 2 && Proration.rounded(7, dividedBy: 2) == 4)
        #expect(Proration.rounded(1, dividedBy: 3) == 0 && Proration.rounded(2, dividedBy: 3) == 1)
    }

    @Test("never more than was paid, never less than nothing, and less as time goes on, to the second")
    func bounded() {
        var previous = Int64.max
        for second in stride(from: -60, through: 30 * 86_400 + 60, by: 997) {
            let left = Proration.unused(9_588, of: Self.month, at: Self.start.addingTimeInterval(Double(second)))
            #expect((0...9_588).contains(left) && left <= previous, "at \(second) s: \(left)")
            previous = left
        }
    }

    @Test("monthly to annual after 10 of 30 days: the annual price less the unused 666 cents; the other way, a credit")
    func change() {
        let tenDays = Self.start.addingTimeInterval(10 * 86_400)
        #expect(Proration.change(from: 999, paidFor: Self.month, to: 9_588, at: tenDays) == 8_922)
        let year = Self.start..<Self.start.addingTimeInterval(365 * 86_400)
        let halfYear = Self.start.addingTimeInterval(182.5 * 86_400)
        #expect(Proration.change(from: 9_588, paidFor: year, to: 999, at: halfYear) == 999 - 4_794)
    }
}
