import BackofficePlatform
import Foundation

/// A plan's schedule: days of meals from recipes (a meal plan), or weeks of sessions from videos
/// and exercises (an exercise plan). Written with ids; stored and answered resolved, each item
/// with the title (and a meal's calories) it had when the version was saved, so a sent plan reads
/// the same whatever happens to the catalogs later.
package enum PlanSchedule: Sendable, Equatable {
    case meals([MealDay])
    case exercise([ExerciseWeek])

    package var kind: PlanKind {
        switch self {
        case .meals: .meal
        case .exercise: .exercise
        }
    }

    /// The most days of a meal plan (four weeks) and weeks of an exercise plan.
    static let maxDays = 28
    static let maxWeeks = 12
}

/// One day of a meal plan.
package struct MealDay: Sendable, Equatable, Codable {
    package var meals: [PlannedMeal]
    package init(meals: [PlannedMeal]) { self.meals = meals }

    /// The day's calories: each meal's recipe per serving × its servings, rounded.
    package var kilocalories: Int { Int(meals.reduce(0) { $0 + ($1.kilocalories ?? 0) }.rounded()) }
}

/// One meal: a live recipe and how many of its servings.
package struct PlannedMeal: Sendable, Equatable, Codable {
    /// When in the day: one of `PlannedMeal.names`.
    package var meal: String
    package var recipeID: UUID
    package var servings: Double
    /// The recipe's title when saved (nil as written).
    package var title: String?
    /// The recipe's calories per serving × `servings` when saved (nil as written).
    package var kilocalories: Double?

    package init(meal: String, recipeID: UUID, servings: Double) {
        (self.meal, self.recipeID, self.servings) = (meal.lowercased(), recipeID, servings)
    }

    static let names = ["breakfast", "lunch", "dinner", "snack"]

    enum CodingKeys: String, CodingKey {
        case meal, servings, title
        case recipeID = "recipe_id"
        case kilocalories = "kcal"
    }
}

/// One week of an exercise plan.
package struct ExerciseWeek: Sendable, Equatable, Codable {
    package var sessions: [PlannedSession]
    package init(sessions: [PlannedSession]) { self.sessions = sessions }

    /// The week's minutes of exercise.
    package var minutes: Int { sessions.reduce(0) { $0 + $1.minutes } }
}

/// One session: a live video, or an exercise named in words, on a day of the week.
package struct PlannedSession: Sendable, Equatable, Codable {
    /// 1 (the week's first day) to 7.
    package var day: Int
    package var videoID: UUID?
    package var exercise: String?
    package var minutes: Int
    /// The video's title when saved, or the exercise (nil as written).
    package var title: String?

    package init(day: Int, videoID: UUID?, exercise: String?, minutes: Int) {
        (self.day, self.videoID, self.minutes) = (day, videoID, minutes)
        self.exercise = exercise.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    enum CodingKeys: String, CodingKey {
        case day, exercise, minutes, title
        case videoID = "video_id"
    }
}

/// A day of a meal plan whose calories are outside the customer's goal by more than 10 %.
package struct PlanWarning: Sendable, Equatable {
    package enum Code: String, Sendable { case belowGoal = "below_goal", aboveGoal = "above_goal" }
    /// 1-based.
    package let day: Int
    package let kilocalories: Int
    package let goal: Int
    package let code: Code

    /// The days of `days` outside ±10 % of `goal` (none without a goal).
    package static func days(_ days: [MealDay], goal: Int?) -> [PlanWarning] {
        guard let goal else { return [] }
        return days.enumerated().compactMap { index, day in
            let kcal = day.kilocalories
            if Double(kcal) < Double(goal) * 0.9 {
                return PlanWarning(day: index + 1, kilocalories: kcal, goal: goal, code: .belowGoal)
            }
            if Double(kcal) > Double(goal) * 1.1 {
                return PlanWarning(day: index + 1, kilocalories: kcal, goal: goal, code: .aboveGoal)
            }
            return nil
        }
    }
}

extension PlanSchedule {
    /// Refuses a schedule that breaks a rule, naming each field: 1–28 days of 1–8 meals (a known
    /// meal, 0.25–10 servings), or 1–12 weeks of 1–14 sessions (a day 1–7, a video or an exercise
    /// of 1–200 characters, 5–240 minutes).
    func validate(into validation: inout Validation) {
        switch self {
        case .meals(let days):
            validation.require(
                (1...Self.maxDays).contains(days.count), "days", "out_of_range", "a plan has 1–28 days")
            for (d, day) in days.enumerated() {
                validation.require(
                    (1...8).contains(day.meals.count), "days[\(d)].meals", "out_of_range", "a day has 1–8 meals")
                for (m, meal) in day.meals.enumerated() {
                    let field = "days[\(d)].meals[\(m)]"
                    validation.require(
                        PlannedMeal.names.contains(meal.meal), "\(field).meal", "unknown_meal",
                        "must be one of \(PlannedMeal.names.joined(separator: ", "))")
                    validation.require(
                        meal.servings.isFinite && (0.25...10).contains(meal.servings), "\(field).servings",
                        "out_of_range", "must be 0.25–10")
                }
            }
        case .exercise(let weeks):
            validation.require(
                (1...Self.maxWeeks).contains(weeks.count), "weeks", "out_of_range", "a plan has 1–12 weeks")
            for (w, week) in weeks.enumerated() {
                validation.require(
                    (1...14).contains(week.sessions.count), "weeks[\(w)].sessions", "out_of_range",
                    "a week has 1–14 sessions")
                for (s, session) in week.sessions.enumerated() {
                    let field = "weeks[\(w)].sessions[\(s)]"
                    validation.require((1...7).contains(session.day), "\(field).day", "out_of_range", "must be 1–7")
                    validation.require(
                        (5...240).contains(session.minutes), "\(field).minutes", "out_of_range", "must be 5–240")
                    let named = session.exercise.map { (1...200).contains($0.count) }
                    validation.require(
                        (session.videoID != nil) != (named != nil) && named != false, "\(field).exercise",
                        "video_or_exercise", "a session is a video_id or an exercise of 1–200 characters, not both")
                }
            }
        }
    }
}
