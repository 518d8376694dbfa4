import Foundation
import PostgresNIO
import BackofficePlatform

/// A profile as `health_profile_read` returns it (the service reads health data only through that
/// function, which records the read first).
extension HealthProfile {
    /// The function's columns: the values, their version and sync time, the history (JSON: one
    /// object per version), the access event's id.
    static let readColumns = """
        version, synced_at, height_cm, weight_hg, birth_year, sex, weight_goal, target_weight_hg, target_date, \
        daily_calorie_goal, activity_level, history, access_id
        """

    /// A profile from one row of `health_profile_read`, with the id of the access event it recorded.
    static func decode(_ row: PostgresRow, customerID: UUID) throws -> (HealthProfile, accessID: Int64) {
        let c = try row.decode(
            (Int32, Date, Int16, Int32, Int16, String, String, Int32?, Date?, Int32, String, String, Int64).self)
        let values = HealthValues(
            heightCM: Int(c.2), weightHG: Int(c.3), birthYear: Int(c.4), sex: try .init(known: c.5),
            weightGoal: try .init(known: c.6), targetWeightHG: c.7.map(Int.init), targetDate: c.8,
            dailyCalorieGoal: Int(c.9), activityLevel: try .init(known: c.10))
        let profile = HealthProfile(
            customerID: customerID, values: values, version: Int(c.0), syncedAt: c.1, weights: try weights(c.11))
        return (profile, c.12)
    }

    /// The weights of the history's versions (JSON objects, oldest first).
    private static func weights(_ json: String) throws -> [WeightPoint] {
        guard let versions = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]] else {
            throw DomainError.inconsistent("a health profile's history is not a list of versions")
        }
        return try versions.map { version in
            guard let time = version["synced_at"] as? String, let at = try? Date(time, strategy: .iso8601),
                let kilograms = (version["weight_kg"] as? NSNumber)?.doubleValue
            else { throw DomainError.inconsistent("a health profile's history holds a malformed version") }
            return WeightPoint(at: at, weightHG: Int((kilograms * 10).rounded()))
        }
    }
}

/// One recorded read of a customer's health profile (`health_access_events`).
package struct HealthAccess: Sendable, Equatable {
    package var id: Int64
    package var occurredAt: Date
    package var customerID: UUID
    package var actorID: UUID?
    package var actorRole: String
    /// A code of `policies/privacy.yaml`'s purposes.
    package var purpose: String
    /// `api`, `console` or `export`.
    package var via: String
    /// The reader's email, when the reader is an operator (the console shows it; the API, which the
    /// app shows customers, answers the id).
    package var actorEmail: String?
}

extension HealthAccess: RowDecodable {
    /// From `health_access_events e LEFT JOIN operators o ON o.id = e.actor_id`.
    package static let columns =
        "e.id, e.occurred_at, e.customer_id, e.actor_id, e.actor_role, e.purpose, e.via, o.email"

    package init(row: PostgresRow) throws {
        let c = try row.decode((Int64, Date, UUID, UUID?, String, String, String, String?).self)
        self.init(
            id: c.0, occurredAt: c.1, customerID: c.2, actorID: c.3, actorRole: c.4, purpose: c.5, via: c.6,
            actorEmail: c.7)
    }
}
