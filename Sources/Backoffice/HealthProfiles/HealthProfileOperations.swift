import Foundation
import PostgresNIO
import BackofficePlatform

/// What a sync answers the app: the version stored, the fields that changed (none: nothing was
/// written) and the review of the calorie goal (the API answers only its flags). No value and no
/// figure derived from one is answered, and the operation takes no Idempotency-Key, so no record of
/// the request or its answer is kept.
package struct HealthProfileSynced: Sendable, Equatable {
    package var customerID: UUID
    package var version: Int
    package var changed: [String]
    package var review: CalorieReview
}

/// The app's backend syncs a customer's profile (`health_profiles.sync`): validated by field,
/// stored through `health_profile_sync` (a new version in the history when a value changed,
/// nothing when none did). The audit event records the fields that changed and a salted digest of
/// the values, never a value: the chain keeps verifying after the profile is erased, and the
/// digest can no longer be matched to anything then.
package struct SyncHealthProfile: AuditedOperation {
    package static let action: Action = "health_profiles.sync"
    package let customerID: UUID
    package let entry: HealthEntry

    package init(customerID: UUID, entry: HealthEntry) {
        self.customerID = customerID
        self.entry = entry
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<HealthProfileSynced> {
        let v = try entry.values(at: unit.now)
        let stored = try await unit.first(
            """
            SELECT version, digest, changed FROM health_profile_sync(\(customerID), \(unit.now), \(Int16(v.heightCM)),
                \(Int32(v.weightHG)), \(Int16(v.birthYear)), \(v.sex.rawValue), \(v.weightGoal.rawValue),
                \(v.targetWeightHG.map(Int32.init)), (\(v.targetDate)::timestamptz AT TIME ZONE 'UTC')::date,
                \(Int32(v.dailyCalorieGoal)),
                \(v.activityLevel.rawValue))
            """
        ) { try $0.decode((Int32, String, [String]).self) }
        guard let (version, digest, changed) = stored else { throw DomainError.notFound("customer") }
        let synced = HealthProfileSynced(
            customerID: customerID, version: Int(version), changed: changed, review: CalorieReview(v, at: unit.now))
        guard !changed.isEmpty else { return .unchanged(synced) }
        struct Change: Encodable { let version: Int, changed: [String], digest: String }
        return Audited(
            synced,
            event: AuditRecord(
                action: Self.action, tenantID: platformTenantID, targetType: "customer", targetID: customerID.text,
                reason: nil, before: nil,
                after: try AuditRecord.json(
                    Change(version: synced.version, changed: changed, digest: digest))))
    }
}
