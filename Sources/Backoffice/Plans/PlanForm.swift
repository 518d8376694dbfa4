import BackofficeConsole
import BackofficePlatform
import Foundation

/// The live recipes and videos a plan is made from, as the plan editor offers them.
package struct PlanCatalog: Query {
    package static let action: Action = "plans.create"

    package struct Item: Sendable, Equatable {
        package let id: UUID
        package let title: String
        /// Calories a serving (a recipe) or minutes (a video).
        package let figure: Int
    }

    package init() {}

    package func read(in unit: UnitOfWork) async throws -> (recipes: [Item], videos: [Item]) {
        let recipes = try await unit.all(
            """
            SELECT r.id, v.title, round(v.energy_kcal)::int FROM recipes r
            JOIN recipe_versions v ON v.recipe_id = r.id AND v.version = r.live_version
            WHERE r.state <> 'archived' ORDER BY v.title, r.id LIMIT 500
            """
        ) { row in
            let (id, title, kcal) = try row.decode((UUID, String, Int).self);
            return Item(id: id, title: title, figure: kcal)
        }
        let videos = try await unit.all(
            """
            SELECT w.id, v.title, (v.duration_seconds / 60)::int FROM videos w
            JOIN video_versions v ON v.video_id = w.id AND v.version = w.live_version
            WHERE w.state <> 'archived' ORDER BY v.title, w.id LIMIT 500
            """
        ) { row in
            let (id, title, min) = try row.decode((UUID, String, Int).self);
            return Item(id: id, title: title, figure: min)
        }
        return (recipes, videos)
    }
}

/// The plan editor's form: a meal plan as seven days of four meals (`d<day>_<meal>` a recipe id,
/// `d<day>_<meal>_servings`), an exercise plan as four weeks of three sessions (`w<week>_s<n>_day`,
/// `_video`, `_exercise`, `_minutes`), and the note. Days and weeks end at the last one filled.
struct PlanForm {
    static let days = 7
    static let weeks = 4
    static let sessions = 3

    let form: ConsoleForm

    /// The content the form holds: of the kind its editor was made for (`kind`; a form sent with
    /// another is refused by the use case, which checks the kind against the request's or the plan's).
    var content: PlanContent {
        let kind = PlanKind(rawValue: form["kind"] ?? "") ?? .meal
        return PlanContent(
            note: form.text("note") ?? "", schedule: kind == .meal ? .meals(mealDays) : .exercise(exerciseWeeks))
    }

    private var mealDays: [MealDay] {
        let days = (1...Self.days).map { day in
            MealDay(
                meals: PlannedMeal.names.compactMap { meal in
                    guard let id = form.text("d\(day)_\(meal)").flatMap(UUID.init(uuidString:)) else { return nil }
                    let servings = form.text("d\(day)_\(meal)_servings").flatMap(Double.init) ?? 1
                    return PlannedMeal(meal: meal, recipeID: id, servings: servings)
                })
        }
        return Array(days.prefix((days.lastIndex { !$0.meals.isEmpty } ?? -1) + 1))
    }

    private var exerciseWeeks: [ExerciseWeek] {
        let weeks = (1...Self.weeks).map { week in
            ExerciseWeek(
                sessions: (1...Self.sessions).compactMap { n in
                    let key = "w\(week)_s\(n)"
                    let video = form.text("\(key)_video").flatMap(UUID.init(uuidString:))
                    let exercise = form.text("\(key)_exercise")
                    guard video != nil || exercise != nil else { return nil }
                    return PlannedSession(
                        day: form.text("\(key)_day").flatMap(Int.init) ?? 1, videoID: video, exercise: exercise,
                        minutes: form.text("\(key)_minutes").flatMap(Int.init) ?? 0)
                })
        }
        return Array(weeks.prefix((weeks.lastIndex { !$0.sessions.isEmpty } ?? -1) + 1))
    }

    /// The form's values for a saved plan (to edit it).
    static func values(of plan: Plan) -> [String: String] {
        var values = ["note": plan.note]
        switch plan.schedule {
        case .meals(let days):
            for (d, day) in days.enumerated() {
                for meal in day.meals {
                    values["d\(d + 1)_\(meal.meal)"] = meal.recipeID.text
                    values["d\(d + 1)_\(meal.meal)_servings"] = String(format: "%g", meal.servings)
                }
            }
        case .exercise(let weeks):
            for (w, week) in weeks.enumerated() {
                for (s, session) in week.sessions.prefix(sessions).enumerated() {
                    let key = "w\(w + 1)_s\(s + 1)"
                    values["\(key)_day"] = String(session.day)
                    values["\(key)_video"] = session.videoID?.text
                    values["\(key)_exercise"] = session.exercise
                    values["\(key)_minutes"] = String(session.minutes)
                }
            }
        }
        return values
    }

    /// The editor's rows for a plan of `kind`, `values` filled in, each select offering the catalog.
    static func rows(
        _ kind: PlanKind, values: [String: String], catalog: (recipes: [PlanCatalog.Item], videos: [PlanCatalog.Item])
    )
        -> [String: Any]
    {
        func options(_ items: [PlanCatalog.Item], unit: String, selected: String?) -> [ConsoleOption] {
            [ConsoleOption.choice(value: "", label: "—", selected: selected == nil)]
                + items.map {
                    ConsoleOption.choice(
                        value: $0.id.text, label: "\($0.title) (\($0.figure) \(unit))", selected: $0.id.text == selected
                    )
                }
        }
        guard kind == .meal else {
            let weeks = (1...Self.weeks).map { week -> [String: Any] in
                let sessions = (1...Self.sessions).map { n -> [String: Any] in
                    let key = "w\(week)_s\(n)"
                    return [
                        "key": key, "n": n, "exercise": values["\(key)_exercise"] ?? "",
                        "minutes": values["\(key)_minutes"] ?? "",
                        "days": (1...7).map {
                            ConsoleOption.choice(
                                value: "\($0)", label: "Day \($0)", selected: values["\(key)_day"] == "\($0)")
                        },
                        "videos": options(catalog.videos, unit: "min", selected: values["\(key)_video"]),
                    ]
                }
                return ["n": week, "sessions": sessions]
            }
            return ["isMeal": false, "kind": kind.rawValue, "weeks": weeks, "note": values["note"] ?? ""]
        }
        let days = (1...Self.days).map { day -> [String: Any] in
            let meals = PlannedMeal.names.map { meal -> [String: Any] in
                let key = "d\(day)_\(meal)"
                return [
                    "key": key, "meal": meal.capitalized, "servings": values["\(key)_servings"] ?? "1",
                    "recipes": options(catalog.recipes, unit: "kcal", selected: values[key]),
                ]
            }
            return ["n": day, "meals": meals]
        }
        return ["isMeal": true, "kind": kind.rawValue, "days": days, "note": values["note"] ?? ""]
    }
}
