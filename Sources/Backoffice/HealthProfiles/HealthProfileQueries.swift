import BackofficePlatform
import Foundation
import PostgresNIO

/// What a read of a profile answers: what any reader may see (version, time, the goal's direction,
/// the activity level, the review's flags) and either the values with the weight history and the
/// review's figures, or, for a role that sees personal data masked, the values' ranges.
package struct HealthProfileRead: Sendable {
    package var customerID: UUID
    package var version: Int
    package var syncedAt: Date
    package var weightGoal: HealthValues.WeightGoal
    package var activityLevel: HealthValues.ActivityLevel
    package var flags: [CalorieReview.Flag]
    /// Nil when masked.
    package var values: HealthValues?
    /// Empty when masked.
    package var weights: [HealthProfile.WeightPoint]
    /// Nil when masked (its figures follow from the values).
    package var review: CalorieReview?
    /// Set instead of the values when masked.
    package var ranges: HealthProfile.Ranges?
    /// The access event the read recorded.
    package var accessID: Int64

    init(_ profile: HealthProfile, accessID: Int64, masked: Bool, at now: Date) {
        let review = CalorieReview(profile.values, at: now)
        (customerID, version, syncedAt) = (profile.customerID, profile.version, profile.syncedAt)
        (weightGoal, activityLevel, flags) = (profile.values.weightGoal, profile.values.activityLevel, review.flags)
        values = masked ? nil : profile.values
        weights = masked ? [] : profile.weights
        self.review = masked ? nil : review
        ranges = masked ? profile.ranges(at: now) : nil
        self.accessID = accessID
    }
}

/// Reads one customer's health profile for a stated purpose (`health_profiles.read`), recording the
/// read (who, whose, when, purpose, via) in the access log first: `health_access_append` commits the
/// event, then `health_profile_read` returns the profile for that event, once. The only way the
/// service reads health data, one customer at a time; it runs in a read session (each statement its
/// own transaction), and inside a transaction the database refuses it (403).
/// Every call records one access event, also when the customer has no profile yet (nil); an unknown
/// customer is 404 and records nothing. A role that sees personal data masked gets ranges
/// (`HealthProfile.Ranges`), not values, and no weight history.
package struct ReadHealthProfile: Query {
    package static let action: Action = "health_profiles.read"
    package let customerID: UUID
    /// A code of `policies/privacy.yaml`'s purposes (422 naming the allowed ones otherwise).
    package let purpose: String?
    /// `export` for the customer's data export; otherwise the principal's channel (api or console).
    package var via: String?
    /// How many versions of the weight history to return (the chart's last year by default).
    package var history = 366
    /// The one purpose an expert reads with (the database admits it only for a held plan request,
    /// and its refusal says so).
    static let planPurpose = "plan"

    package init(customerID: UUID, purpose: String?) {
        self.customerID = customerID
        self.purpose = purpose
    }

    package func read(in unit: UnitOfWork) async throws -> HealthProfileRead? {
        let privacy = unit.policies.privacy
        guard let purpose, privacy.allows(purpose: purpose) else {
            throw DomainError.invalid([
                FieldIssue(
                    field: "purpose", code: purpose == nil ? "required" : "unknown_purpose",
                    message: "say why you read this customer's health data: one of \(privacy.purposeCodes)")
            ])
        }
        let principal = unit.context.principal
        let channel = via ?? (principal.sessionID != nil ? "console" : "api")
        // Two statements, each its own transaction (a read session): the access event commits before
        // the read, and health_profile_read refuses an event its own transaction wrote.
        let access = try await unit.first(
            """
            SELECT health_access_append(\(customerID), \(principal.operatorID), \(purpose), \(channel),
                \(unit.context.requestID), \(principal.tokenID), \(principal.sessionID))
            """
        ) { try $0.decode(Int64.self) }
        guard let access else { throw DomainError.inconsistent("health_access_append answered no event") }
        let rows = try await unit.all(
            "SELECT \(unescaped: HealthProfile.readColumns) FROM health_profile_read(\(access), \(Int32(history)))"
        ) { try HealthProfile.decode($0, customerID: customerID) }
        return rows.first.map { HealthProfileRead($0, accessID: $1, masked: unit.context.masksPII, at: unit.now) }
    }
}

/// Who read a customer's health profile, newest first (`health_profiles.accesses`): the access
/// log's events for that customer, after the keyset `beforeID`. Reading this list reads no health
/// data and records nothing.
package struct ListHealthProfileAccesses: Query {
    package static let action: Action = "health_profiles.accesses"
    package let customerID: UUID
    package let beforeID: Int64?
    package let limit: Int

    package init(customerID: UUID, beforeID: Int64? = nil, limit: Int) {
        self.customerID = customerID
        self.beforeID = beforeID
        self.limit = limit
    }

    package func read(in unit: UnitOfWork) async throws -> [HealthAccess] {
        _ = try await Customer.fetch(customerID, in: unit)
        return try await unit.all(
            """
            SELECT \(unescaped: HealthAccess.columns) FROM health_access_events e
            LEFT JOIN operators o ON o.id = e.actor_id
            WHERE e.customer_id = \(customerID) AND e.id < \(beforeID ?? .max) ORDER BY e.id DESC LIMIT \(limit)
            """)
    }
}

/// The purpose this console session stated for reading the customer's health data (nil: not yet,
/// or not a console session): asked once per session and customer.
package struct StatedReadPurpose: Query {
    package static let action: Action = "health_profiles.read"
    package let customerID: UUID

    package init(customerID: UUID) { self.customerID = customerID }

    package func read(in unit: UnitOfWork) async throws -> String? {
        guard let session = unit.context.principal.sessionID else { return nil }
        return try await unit.first(
            """
            SELECT purpose FROM console_read_purposes WHERE session_id = \(session) AND customer_id = \(customerID)
            """
        ) { try $0.decode(String.self) }
    }
}

/// A console session states (or changes) why it reads the customer's health data: a code of
/// `policies/privacy.yaml` (422 naming them otherwise). Session state, not a change to anyone's
/// data: no audit event; every read it leads to records the purpose in the access log.
package struct StateReadPurpose: AuditedOperation {
    package static let action: Action = "health_profiles.read"
    package let customerID: UUID
    package let purpose: String?

    package init(customerID: UUID, purpose: String?) {
        self.customerID = customerID
        self.purpose = purpose
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<String> {
        let privacy = unit.policies.privacy
        guard let purpose, privacy.allows(purpose: purpose) else {
            throw DomainError.invalid([
                FieldIssue(field: "purpose", code: "required", message: "choose why you read this customer's data")
            ])
        }
        guard let session = unit.context.principal.sessionID else {
            throw DomainError.invalid([
                FieldIssue(field: "purpose", code: "console_only", message: "a purpose is stated in a console session")
            ])
        }
        _ = try await Customer.fetch(customerID, in: unit)
        try await unit.execute(
            """
            INSERT INTO console_read_purposes (session_id, customer_id, purpose, stated_at)
            VALUES (\(session), \(customerID), \(purpose), \(unit.now))
            ON CONFLICT (session_id, customer_id)
                DO UPDATE SET purpose = EXCLUDED.purpose, stated_at = EXCLUDED.stated_at
            """)
        return .unchanged(purpose)
    }
}
