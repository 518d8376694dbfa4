import Foundation
import BackofficePlatform

/// The check of the daily calorie goal the app computed, against the Mifflin–St Jeor estimate
/// (Mifflin et al., 1990): BMR = 10 × kg + 6.25 × cm − 5 × age + 5 (men) or − 161 (women), and
/// the day's energy = BMR × the activity factor. For "other" and "not said" the constant is the
/// two's mean (−78). Pure: no I/O.
///
/// Nothing is refused (the app decides the goal); the back office shows these flags on the
/// customer's page for a person to review.
package struct CalorieReview: Sendable, Equatable {
    /// Why a profile is flagged.
    package enum Flag: String, Sendable, CaseIterable {
        /// The goal is under the floor: 1,200 kcal for women, 1,500 for men (for other and not said,
        /// 1,200: the flag asks for a look, it does not guess the body).
        case lowCalorieGoal = "low_calorie_goal"
        /// The plan loses more than 1 kg a week: by the target weight and date, or by the goal's
        /// deficit against the estimate (7,700 kcal a kilogram).
        case fastPlannedLoss = "fast_planned_loss"
    }

    /// Resting energy (kcal a day), rounded.
    package let basalMetabolicRate: Int
    /// The day's energy with the activity factor (kcal a day), rounded.
    package let dailyEnergy: Int
    /// The planned loss in kilograms a week (the faster of the target plan and the deficit), or nil
    /// when neither plans a loss.
    package let plannedLossPerWeek: Double?
    package let flags: [Flag]

    /// Kilocalories in one kilogram of body weight (the usual approximation).
    static let kcalPerKilogram = 7_700.0

    package init(_ values: HealthValues, at now: Date) {
        let bmr = Self.basalMetabolicRate(
            weightKG: Double(values.weightHG) / 10, heightCM: Double(values.heightCM), age: values.age(at: now),
            sex: values.sex)
        let energy = bmr * values.activityLevel.factor
        basalMetabolicRate = Int(bmr.rounded())
        dailyEnergy = Int(energy.rounded())
        let deficitLoss = (energy - Double(values.dailyCalorieGoal)) * 7 / Self.kcalPerKilogram
        var losses: [Double] = deficitLoss > 0 ? [deficitLoss] : []
        // A plan whose day has passed is over: only the deficit speaks then.
        if values.weightGoal == .lose, let target = values.targetWeightHG, let date = values.targetDate, date > now {
            let weeks = max(date.timeIntervalSince(now) / (7 * 86_400), 1.0 / 7)
            losses.append(Double(values.weightHG - target) / 10 / weeks)
        }
        plannedLossPerWeek = losses.max()
        var flags: [Flag] = []
        if values.dailyCalorieGoal < Self.floor(values.sex) { flags.append(.lowCalorieGoal) }
        if let loss = plannedLossPerWeek, loss > 1 { flags.append(.fastPlannedLoss) }
        self.flags = flags
    }

    /// Mifflin–St Jeor's resting energy, unrounded.
    package static func basalMetabolicRate(weightKG: Double, heightCM: Double, age: Int, sex: HealthValues.Sex)
        -> Double
    {
        let constant: Double =
            switch sex {
            case .male: 5
            case .female: -161
            case .other, .notSaid: -78
            }
        return 10 * weightKG + 6.25 * heightCM - 5 * Double(age) + constant
    }

    /// The lowest daily goal not flagged.
    static func floor(_ sex: HealthValues.Sex) -> Int { sex == .male ? 1_500 : 1_200 }
}
