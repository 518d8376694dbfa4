import BackofficePlatform
import Foundation

/// A customer's health profile as the app syncs it: metric, exact (weights in hectograms, 0.1 kg),
/// validated by field. What the app's customer entered to get a daily calorie goal.
package struct HealthValues: Sendable, Equatable {
    package enum Sex: String, Sendable, CaseIterable { case female, male, other, notSaid = "not_said" }
    package enum WeightGoal: String, Sendable, CaseIterable { case lose, keep, gain }
    package enum ActivityLevel: String, Sendable, CaseIterable {
        case sedentary, light, moderate, active, veryActive = "very_active"

        /// The Mifflin–St Jeor activity factor (total daily energy = BMR × factor).
        package var factor: Double {
            switch self {
            case .sedentary: 1.2
            case .light: 1.375
            case .moderate: 1.55
            case .active: 1.725
            case .veryActive: 1.9
            }
        }
    }

    package var heightCM: Int
    /// Kilograms × 10.
    package var weightHG: Int
    package var birthYear: Int
    package var sex: Sex
    package var weightGoal: WeightGoal
    /// Kilograms × 10; with a goal to lose or gain.
    package var targetWeightHG: Int?
    /// The day the target weight is planned for (a calendar day, UTC).
    package var targetDate: Date?
    package var dailyCalorieGoal: Int
    package var activityLevel: ActivityLevel

    package init(
        heightCM: Int, weightHG: Int, birthYear: Int, sex: Sex, weightGoal: WeightGoal, targetWeightHG: Int? = nil,
        targetDate: Date? = nil, dailyCalorieGoal: Int, activityLevel: ActivityLevel
    ) {
        (
            self.heightCM, self.weightHG, self.birthYear, self.sex, self.weightGoal, self.targetWeightHG,
            self.targetDate, self.dailyCalorieGoal, self.activityLevel
        ) = (
            heightCM, weightHG, birthYear, sex, weightGoal, targetWeightHG, targetDate, dailyCalorieGoal, activityLevel
        )
    }

    /// The accepted ranges, by field (the contract states the same).
    package static let heights = 50...250
    package static let weightsHG = 200...4000
    package static let calorieGoals = 500...10_000
    /// Customers are at least this old (the app's minimum age) and at most 120.
    package static let minimumAge = 13

    /// Checks every field into `v`, naming each one out of range (422), at `now`: a birth year in the
    /// future or under the minimum age, a target weight that does not match the goal's direction, a
    /// target day without a target weight. A target day already past is accepted (the plan is over;
    /// the review leaves it out), so a profile synced again after its day is not refused. `skipping`
    /// names fields already refused (unreadable), whose ranges are not checked again.
    func check(at now: Date, into v: inout Validation, skipping: Set<String> = []) {
        let year = Calendar.utc.component(.year, from: now)
        v.require(Self.heights.contains(heightCM), "height_cm", "out_of_range", "must be 50–250 cm")
        if !skipping.contains("weight_kg") {
            v.require(Self.weightsHG.contains(weightHG), "weight_kg", "out_of_range", "must be 20.0–400.0 kg")
        }
        v.require(
            (year - 120...year - Self.minimumAge).contains(birthYear), "birth_year", "out_of_range",
            "must be \(year - 120)–\(year - Self.minimumAge) (customers are \(Self.minimumAge) to 120)")
        v.require(
            Self.calorieGoals.contains(dailyCalorieGoal), "daily_calorie_goal", "out_of_range", "must be 500–10000 kcal"
        )
        if let target = targetWeightHG, !skipping.contains("weight_kg") {
            v.require(Self.weightsHG.contains(target), "target_weight_kg", "out_of_range", "must be 20.0–400.0 kg")
            v.require(
                weightGoal != .lose || target < weightHG, "target_weight_kg", "against_goal",
                "must be below the weight to lose weight")
            v.require(
                weightGoal != .gain || target > weightHG, "target_weight_kg", "against_goal",
                "must be above the weight to gain weight")
        }
        if targetDate != nil {
            v.require(targetWeightHG != nil, "target_date", "without_target", "needs a target_weight_kg")
        }
    }

    /// The customer's age in whole years at `now` (the birthday is not kept: the year's difference).
    package func age(at now: Date) -> Int { Calendar.utc.component(.year, from: now) - birthYear }
}

/// A profile as the app sends it, before validation: kilograms as numbers, the target as a
/// `YYYY-MM-DD` day. `values(at:)` checks every field and names each one refused.
package struct HealthEntry: Sendable {
    package var heightCM: Int
    package var weightKG: Double
    package var birthYear: Int
    package var sex: HealthValues.Sex
    package var weightGoal: HealthValues.WeightGoal
    package var targetWeightKG: Double?
    package var targetDay: String?
    package var dailyCalorieGoal: Int
    package var activityLevel: HealthValues.ActivityLevel

    package init(
        heightCM: Int, weightKG: Double, birthYear: Int, sex: HealthValues.Sex, weightGoal: HealthValues.WeightGoal,
        targetWeightKG: Double? = nil, targetDay: String? = nil, dailyCalorieGoal: Int,
        activityLevel: HealthValues.ActivityLevel
    ) {
        (
            self.heightCM, self.weightKG, self.birthYear, self.sex, self.weightGoal, self.targetWeightKG,
            self.targetDay, self.dailyCalorieGoal, self.activityLevel
        ) = (heightCM, weightKG, birthYear, sex, weightGoal, targetWeightKG, targetDay, dailyCalorieGoal, activityLevel)
    }

    /// The validated values at `now` (one 422 naming every field refused: a weight with more than one
    /// decimal, a day no calendar has, and `HealthValues.check`'s ranges).
    package func values(at now: Date) throws -> HealthValues {
        var v = Validation()
        let weight = Self.hectograms(weightKG, "weight_kg", &v)
        let target = targetWeightKG.flatMap { Self.hectograms($0, "target_weight_kg", &v) }
        let day = targetDay.flatMap { text in
            let date = Self.day(text)
            v.require(date != nil, "target_date", "invalid_date", "must be a calendar day YYYY-MM-DD")
            return date
        }
        let values = HealthValues(
            heightCM: heightCM, weightHG: weight ?? 0, birthYear: birthYear, sex: sex, weightGoal: weightGoal,
            targetWeightHG: target, targetDate: day, dailyCalorieGoal: dailyCalorieGoal, activityLevel: activityLevel)
        values.check(at: now, into: &v, skipping: weight == nil ? ["weight_kg"] : [])
        try v.check()
        return values
    }

    /// Kilograms with at most one decimal, as hectograms (nil, with an issue on `field`, otherwise).
    static func hectograms(_ kilograms: Double, _ field: String, _ v: inout Validation) -> Int? {
        let tenths = kilograms * 10
        guard kilograms.isFinite, abs(tenths - tenths.rounded()) < 1e-6, abs(tenths) < 1e9 else {
            v.require(false, field, "invalid_weight", "kilograms with at most one decimal")
            return nil
        }
        return Int(tenths.rounded())
    }

    /// A `YYYY-MM-DD` day as its first instant in UTC (nil for a day no calendar has: 2099-02-30).
    static func day(_ text: String) -> Date? {
        guard text.utf8.count == 10,
            let date = try? Date(text, strategy: Date.ISO8601FormatStyle(timeZone: .gmt).year().month().day()),
            dayText(date) == text
        else { return nil }
        return date
    }

    /// `date`'s calendar day in UTC as `YYYY-MM-DD`.
    package static func dayText(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(timeZone: .gmt).year().month().day())
    }
}

/// A stored profile: the current values, their version and when the app synced them, with the
/// weights of earlier versions for the chart (oldest first).
package struct HealthProfile: Sendable, Equatable {
    package var customerID: UUID
    package var values: HealthValues
    package var version: Int
    package var syncedAt: Date
    package var weights: [WeightPoint]

    package struct WeightPoint: Sendable, Equatable {
        package var at: Date
        package var weightHG: Int
    }

    /// What an auditor sees instead of values (`masked`): each number as the band it falls in, the
    /// sex not at all; the goal's direction, the activity level and the review flags as they are.
    package struct Ranges: Sendable, Equatable {
        package var heightCM: String
        package var weightKG: String
        package var age: String
        package var targetWeightKG: String?
        package var dailyCalorieGoal: String
    }

    package func ranges(at now: Date) -> Ranges {
        Ranges(
            heightCM: Self.band(values.heightCM, width: 10), weightKG: Self.band(values.weightHG / 10, width: 10),
            age: Self.band(values.age(at: now), width: 10),
            targetWeightKG: values.targetWeightHG.map { Self.band($0 / 10, width: 10) },
            dailyCalorieGoal: Self.band(values.dailyCalorieGoal, width: 250))
    }

    /// `value`'s band of `width`, as "170–179".
    static func band(_ value: Int, width: Int) -> String {
        let low = value / width * width
        return "\(low)–\(low + width - 1)"
    }
}
