import BackofficePlatform
import Foundation
import PostgresNIO

/// The experts' queue (`plans.queue`): waiting requests, oldest first, of one kind or both, after
/// the keyset `after`. An expert sees those nobody holds and its own (row-level security); a
/// manager sees every waiting request, held or not.
package struct PlanQueue: Query {
    package static let action: Action = "plans.queue"
    let kind: PlanKind?
    let after: (time: Date, id: UUID)?
    let limit: Int

    package init(kind: PlanKind?, after: (time: Date, id: UUID)? = nil, limit: Int) {
        (self.kind, self.after, self.limit) = (kind, after, limit)
    }

    package func read(in unit: UnitOfWork) async throws -> [PlanRequest] {
        try await unit.all(
            """
            SELECT \(unescaped: PlanRequest.columns) FROM plan_requests
            WHERE status = 'waiting' AND (\(kind?.rawValue)::text IS NULL OR kind = \(kind?.rawValue))
              AND (\(after?.time)::timestamptz IS NULL OR (filed_at, id) > (\(after?.time), \(after?.id)))
            ORDER BY filed_at, id LIMIT \(limit)
            """, as: PlanRequest.self
        ).map { $0.shown(to: unit) }
    }
}

/// One request (`plans.queue`), as the principal sees it (an expert: in the queue, or its own).
package struct GetPlanRequest: Query {
    package static let action: Action = "plans.queue"
    let id: UUID

    package init(id: UUID) { self.id = id }

    package func read(in unit: UnitOfWork) async throws -> PlanRequest {
        try await PlanRequest.fetch(id, in: unit).shown(to: unit)
    }
}

/// One plan, its newest version (`plans.read`): an expert reads the plans it wrote and those whose
/// change it holds; another's is 404.
package struct GetPlan: Query {
    package static let action: Action = "plans.read"
    let id: UUID

    package init(id: UUID) { self.id = id }

    package func read(in unit: UnitOfWork) async throws -> Plan { try await Plan.fetch(id, in: unit) }
}

/// Plans, the last changed first (`plans.list`), after the keyset `after`; an expert's own only.
package struct ListPlans: Query {
    package static let action: Action = "plans.list"
    let after: (time: Date, id: UUID)?
    let limit: Int

    package init(after: (time: Date, id: UUID)? = nil, limit: Int) { (self.after, self.limit) = (after, limit) }

    package func read(in unit: UnitOfWork) async throws -> [Plan] {
        try await unit.all(
            """
            SELECT \(unescaped: Plan.columns) FROM \(unescaped: Plan.source)
            WHERE \(after?.time)::timestamptz IS NULL OR (p.updated_at, p.id) < (\(after?.time), \(after?.id))
            ORDER BY p.updated_at DESC, p.id DESC LIMIT \(limit)
            """)
    }
}

/// A plan as the customer's app shows it: the version they were sent.
package struct SentPlan: Sendable, Equatable {
    package var id: UUID
    package var kind: PlanKind
    package var version: Int
    package var sentAt: Date
    package var note: String
    package var schedule: PlanSchedule
}

/// The plans a customer was sent (`plans.for_customer`), the last sent first: each the version
/// sent (a newer one being written is not the customer's yet). The app's read for the customer's
/// own screen; 404 for a customer not found or deleted.
package struct CustomerPlans: Query {
    package static let action: Action = "plans.for_customer"
    let customerID: UUID

    package init(customerID: UUID) { self.customerID = customerID }

    package func read(in unit: UnitOfWork) async throws -> [SentPlan] {
        var found = false
        var plans: [SentPlan] = []
        for row in try await unit.all(
            """
            SELECT p.id, p.kind, p.sent_version, p.sent_at, v.note, v.schedule::text
            FROM customers c
            LEFT JOIN plans p ON p.customer_id = c.id AND p.sent_version IS NOT NULL
            LEFT JOIN plan_versions v ON v.plan_id = p.id AND v.version = p.sent_version
            WHERE c.id = \(customerID) AND c.status <> 'deleted'
            ORDER BY p.sent_at DESC, p.id DESC LIMIT 100
            """, { $0 })
        {
            found = true
            let c = try row.decode((UUID?, String?, Int32?, Date?, String?, String?).self)
            guard let id = c.0, let kind = c.1, let version = c.2, let sentAt = c.3, let note = c.4, let json = c.5
            else { continue }
            let planKind = try PlanKind(known: kind)
            plans.append(
                SentPlan(
                    id: id, kind: planKind, version: Int(version), sentAt: sentAt, note: note,
                    schedule: try PlanSchedule(stored: json, kind: planKind)))
        }
        guard found else { throw DomainError.notFound("Customer \(customerID.text)") }
        return plans
    }
}
