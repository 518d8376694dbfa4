import Foundation
import BackofficePlatform

/// What the app measures. Each event's `value` is in the metric's unit.
package enum Metric: String, Sendable, Codable, CaseIterable {
    /// Kilocalories.
    case caloriesBurned = "calories_burned"
    /// Minutes of a workout; `details.met` gives its intensity (MET), `details.bodyweight_kg` its energy.
    case workoutMinutes = "workout_minutes"
    /// Metres.
    case distanceM = "distance_m"
    case steps
    /// One set: `value` is its volume in kg (weight × reps); `details` carry `exercise`,
    /// `weight_kg`, `reps`, `bodyweight_kg` and `sex` for the lifter's strength points.
    case lift

    /// The largest value one event may carry: far beyond any real measurement, so that sums stay
    /// finite and a typo (a distance in millimetres) is rejected rather than ranked.
    package var maximum: Double {
        switch self {
        case .caloriesBurned: 20_000
        case .workoutMinutes: 1_440
        case .distanceM: 1_000_000
        case .steps: 200_000
        case .lift: 100_000
        }
    }

    package var unit: String {
        switch self {
        case .caloriesBurned: "kcal"
        case .workoutMinutes: "min"
        case .distanceM: "m"
        case .steps: "steps"
        case .lift: "kg"
        }
    }
}

/// An event as the app sends it, before any check.
package struct ActivityEventInput: Sendable {
    package var eventID: String
    package var customerID: String
    package var metric: String
    package var value: Double
    package var occurredAt: Date
    package var details: ActivityDetails

    package init(
        eventID: String, customerID: String, metric: String, value: Double, occurredAt: Date,
        details: ActivityDetails = .init()
    ) {
        (self.eventID, self.customerID, self.metric, self.value, self.occurredAt, self.details) =
            (eventID, customerID, metric, value, occurredAt, details)
    }
}

/// The optional facts of an event; which are required depends on the metric.
package struct ActivityDetails: Sendable, Codable, Equatable {
    package var met: Double?
    package var bodyweightKg: Double?
    package var exercise: String?
    package var weightKg: Double?
    package var reps: Int?
    package var sex: String?
    package var source: String?
    /// Derived when stored: a workout's MET class, its energy, a lift's estimated one-rep max
    /// (Epley) and the lifter's Wilks points for it.
    package var intensity: MET.Intensity?
    package var kilocalories: Double?
    package var oneRepMaxKg: Double?
    package var wilks: Double?

    package init(
        met: Double? = nil, bodyweightKg: Double? = nil, exercise: String? = nil, weightKg: Double? = nil,
        reps: Int? = nil, sex: String? = nil,
        source: String? = nil
    ) {
        (self.met, self.bodyweightKg, self.exercise, self.weightKg, self.reps, self.sex, self.source) =
            (met, bodyweightKg, exercise, weightKg, reps, sex, source)
    }

    enum CodingKeys: String, CodingKey {
        case met, exercise, reps, sex, source, intensity, kilocalories, wilks
        case bodyweightKg = "bodyweight_kg"
        case weightKg = "weight_kg"
        case oneRepMaxKg = "one_rep_max_kg"
    }
}

/// An event that passed every check, with what is derived from it.
package struct ActivityEvent: Sendable, Equatable {
    package var eventID: String
    package var customerID: UUID
    package var metric: Metric
    package var value: Double
    /// What a challenge on this metric ranks: the value, or for a lift the Wilks points of its
    /// estimated one-rep max.
    package var score: Double
    package var occurredAt: Date
    package var details: ActivityDetails

    /// How far ahead of the service's clock an event may be dated (clock skew of phones).
    package static let futureTolerance: TimeInterval = 5 * 60
    /// How old an event may be when it arrives (an app that was offline for a while).
    package static let maximumAge: TimeInterval = 30 * 86_400

    /// Checks `input` at `now`; the reason it is rejected otherwise (a stable snake_case code
    /// and a sentence).
    package static func check(_ input: ActivityEventInput, now: Date) -> Result<ActivityEvent, Rejection> {
        let eventID = input.eventID
        guard !eventID.isEmpty, eventID.unicodeScalars.count <= 200,
            !eventID.unicodeScalars.contains(where: { $0.value < 0x20 })
        else {
            return .failure(Rejection("invalid_event_id", "event_id must be 1–200 printable characters"))
        }
        guard let customerID = UUID(uuidString: input.customerID) else {
            return .failure(Rejection("invalid_customer_id", "customer_id is not a UUID"))
        }
        guard let metric = Metric(rawValue: input.metric) else {
            return .failure(
                Rejection(
                    "unknown_metric", "metric must be one of \(Metric.allCases.map(\.rawValue).joined(separator: ", "))"
                ))
        }
        guard input.value.isFinite, input.value >= 0 else {
            return .failure(Rejection("invalid_value", "value must be a finite number ≥ 0"))
        }
        guard input.value <= metric.maximum else {
            return .failure(
                Rejection(
                    "value_out_of_range", "value must be at most \(Int(metric.maximum)) \(metric.unit) for one event"))
        }
        guard input.occurredAt <= now.addingTimeInterval(futureTolerance) else {
            return .failure(Rejection("in_the_future", "occurred_at is more than 5 minutes ahead"))
        }
        guard input.occurredAt >= now.addingTimeInterval(-maximumAge) else {
            return .failure(Rejection("too_old", "occurred_at is more than 30 days ago"))
        }
        var details = input.details
        if let source = details.source, source.unicodeScalars.count > 100 {
            return .failure(Rejection("invalid_details", "source is too long"))
        }
        if let bodyweight = details.bodyweightKg, !(bodyweight.isFinite && (20...400).contains(bodyweight)) {
            return .failure(Rejection("invalid_details", "bodyweight_kg must be between 20 and 400"))
        }
        var score = input.value
        switch metric {
        case .workoutMinutes:
            guard let met = details.met, met.isFinite, (1...25).contains(met) else {
                return .failure(Rejection("missing_details", "a workout needs details.met between 1 and 25"))
            }
            details.intensity = MET.intensity(met)
            details.kilocalories = details.bodyweightKg.map {
                MET.kilocalories(met: met, bodyMassKg: $0, hours: input.value / 60)
            }
        case .lift:
            guard let exercise = details.exercise, !exercise.isEmpty, exercise.unicodeScalars.count <= 100 else {
                return .failure(Rejection("missing_details", "a lift needs details.exercise"))
            }
            guard let weight = details.weightKg, weight.isFinite, weight > 0, weight <= 1000, let reps = details.reps,
                (1...30).contains(reps)
            else {
                return .failure(
                    Rejection("missing_details", "a lift needs details.weight_kg (0–1000) and details.reps (1–30)"))
            }
            guard let bodyweight = details.bodyweightKg, let sex = details.sex.flatMap(LifterSex.init(rawValue:)) else {
                return .failure(
                    Rejection(
                        "missing_details",
                        "a lift needs details.bodyweight_kg and details.sex (male or female) for strength points"))
            }
            let oneRepMax =
                reps == 1 ? weight : (OneRepMax.estimate(weight: weight, reps: reps, formula: .epley) ?? weight)
            let wilks = StrengthPoints.wilks(totalKg: oneRepMax, bodyweightKg: bodyweight, sex: sex)
            (details.oneRepMaxKg, details.wilks, score) = (oneRepMax, wilks, wilks)
        case .caloriesBurned, .distanceM, .steps:
            break
        }
        return .success(
            ActivityEvent(
                eventID: eventID, customerID: customerID, metric: metric, value: input.value, score: score,
                occurredAt: input.occurredAt,
                details: details))
    }

    /// Why an event was not stored.
    package struct Rejection: Error, Sendable, Equatable {
        package let code: String
        package let message: String
        init(_ code: String, _ message: String) { (self.code, self.message) = (code, message) }
    }
}
