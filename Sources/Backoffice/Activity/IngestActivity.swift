import Foundation
import PostgresNIO
import BackofficePlatform

/// The app reports a batch of activity (`activity.ingest`, up to 5,000 events). Each event is
/// `accepted` (stored, and paid by the earning rules in force), `duplicate` (its event_id was
/// seen before, also earlier in the same batch: nothing changes) or `rejected` with the reason.
///
/// Guarantees: an event is stored and paid exactly once, in the same transaction, however often
/// its batch is sent and whatever batches run at the same time; a day's points per customer and
/// rule never exceed the rule's cap and do not depend on how the day's events were batched;
/// every ledger entry names the rule, the rules' version and the event; the scores of the open
/// challenges whose window holds an event are updated in the same transaction, and badges whose
/// rule an event meets are awarded. Accounts that are locked record their activity (and scores)
/// but earn nothing while locked; deleted or unknown accounts are rejected.
package struct IngestActivity: AuditedOperation {
    package static let action: Action = "activity.ingest"
    package static let maximumBatch = 5_000
    package let events: [ActivityEventInput]

    package init(events: [ActivityEventInput]) { self.events = events }

    package enum Status: String, Sendable { case accepted, duplicate, rejected }

    package struct EventOutcome: Sendable, Equatable {
        package var eventID: String
        package var status: Status
        package var reason: ActivityEvent.Rejection?
        package var points: Int64
    }

    package struct Outcome: Sendable {
        package var batchID: UUID
        package var ruleVersion: Int?
        package var events: [EventOutcome]
        package func count(_ status: Status) -> Int { events.reduce(0) { $0 + ($1.status == status ? 1 : 0) } }
        package var points: Int64 { events.reduce(0) { $0 + $1.points } }
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Outcome> {
        var validation = Validation()
        validation.require(!events.isEmpty, "events", "required", "must hold at least one event")
        validation.require(
            events.count <= Self.maximumBatch, "events", "too_many", "must hold at most \(Self.maximumBatch) events")
        try validation.check()

        let batchID = unit.newID()
        var outcomes = events.map { EventOutcome(eventID: $0.eventID, status: .accepted, reason: nil, points: 0) }
        var candidates: [(index: Int, event: ActivityEvent)] = []
        var seen = Set<String>()
        for (index, input) in events.enumerated() {
            switch ActivityEvent.check(input, now: unit.now) {
            case .failure(let rejection): (outcomes[index].status, outcomes[index].reason) = (.rejected, rejection)
            case .success(let event):
                if seen.insert(event.eventID).inserted {
                    candidates.append((index, event))
                } else {
                    outcomes[index].status = .duplicate
                }
            }
        }

        // Whose activity it is: unknown and deleted accounts are rejected, locked ones earn nothing.
        var statuses: [UUID: AccountStatus] = [:]
        let customerIDs = Array(Set(candidates.map(\.event.customerID)))
        if !customerIDs.isEmpty {
            for (id, status) in try await unit.all(
                "SELECT id, status FROM customers WHERE id = ANY(\(customerIDs)::uuid[])",
                { try $0.decode((UUID, String).self) })
            {
                statuses[id] = try AccountStatus(known: status)
            }
        }
        candidates.removeAll { candidate in
            switch statuses[candidate.event.customerID] {
            case nil:
                (outcomes[candidate.index].status, outcomes[candidate.index].reason) = (
                    .rejected, .init("unknown_customer", "no such customer")
                )
            case .deleted?:
                (outcomes[candidate.index].status, outcomes[candidate.index].reason) = (
                    .rejected, .init("account_deleted", "the account is deleted")
                )
            default: return false
            }
            return true
        }

        let stored = try await store(candidates.map(\.event), batchID: batchID, in: unit)
        var accepted: [(index: Int, event: ActivityEvent)] = []
        for candidate in candidates {
            if stored.contains(candidate.event.eventID) {
                accepted.append(candidate)
            } else {
                outcomes[candidate.index].status = .duplicate
            }
        }

        let ruleSet = try await EarningRuleSet.current(in: unit)
        let earning = accepted.filter { statuses[$0.event.customerID] != .locked }
        if let ruleSet {
            for (index, points) in try await pay(earning, under: ruleSet, batchID: batchID, in: unit) {
                outcomes[index].points = points
            }
        }
        try await BadgeAwards.awardByRules(for: earning.map(\.event), paidBy: ruleSet, in: unit)
        try await ChallengeScores.record(accepted.map(\.event), in: unit)

        let outcome = Outcome(batchID: batchID, ruleVersion: ruleSet?.version, events: outcomes)
        struct Summary: Encodable {
            let accepted: Int, duplicates: Int, rejected: Int, points: Int64, rule_version: Int?
        }
        let event = AuditRecord(
            action: Self.action, tenantID: platformTenantID, targetType: "activity_batch", targetID: batchID.text,
            reason: nil, before: nil,
            after: try AuditRecord.json(
                Summary(
                    accepted: outcome.count(.accepted), duplicates: outcome.count(.duplicate),
                    rejected: outcome.count(.rejected),
                    points: outcome.points, rule_version: ruleSet?.version)))
        return Audited(outcome, event: event)
    }

    /// Stores the events whose id is new; returns the ids stored.
    private func store(_ events: [ActivityEvent], batchID: UUID, in unit: UnitOfWork) async throws -> Set<String> {
        guard !events.isEmpty else { return [] }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let empty = ActivityDetails()
        let details = try events.map {
            $0.details == empty ? "{}" : String(decoding: try encoder.encode($0.details), as: UTF8.self)
        }
        var stored = Set<String>()
        for try await id in try await unit.connection.send(
            """
            INSERT INTO activity_events (event_id, customer_id, metric, value, score, intensity, occurred_at, details,
                batch_id, received_at)
            SELECT e.id, e.customer, e.metric, e.value, e.score, NULLIF(e.intensity, ''), e.occurred_at,
                e.details::jsonb, \(batchID), \(unit.now)
            FROM unnest(\(events.map(\.eventID))::text[], \(events.map(\.customerID))::uuid[],
                \(events.map(\.metric.rawValue))::text[],
                \(events.map(\.value))::float8[], \(events.map(\.score))::float8[],
                    \(events.map { $0.details.intensity?.rawValue ?? "" })::text[],
                \(events.map(\.occurredAt))::timestamptz[], \(details)::text[])
                AS e(id, customer, metric, value, score, intensity, occurred_at, details)
            ON CONFLICT (event_id) DO NOTHING
            RETURNING event_id
            """, logger: unit.logger
        ).decode(String.self) { stored.insert(id) }
        return stored
    }

    /// Pays the events' points by the metric rules of `ruleSet`, within each (customer, rule,
    /// UTC day)'s cap; returns the points per event index.
    private func pay(
        _ events: [(index: Int, event: ActivityEvent)], under ruleSet: EarningRuleSet, batchID: UUID,
        in unit: UnitOfWork
    ) async throws
        -> [(Int, Int64)]
    {
        /// A customer's earnings by one rule on one UTC day (days since 1970-01-01).
        struct Day: Hashable {
            let customer: UUID, ruleID: String, day: Int
            /// Every batch inserts its days in this order, so concurrent batches never deadlock.
            var order: (UInt64, UInt64, String, Int) { (customer.orderKey.0, customer.orderKey.1, ruleID, day) }
        }
        var counted: [(index: Int, event: ActivityEvent, rule: EarningRules.MetricRule, day: Day)] = []
        for (index, event) in events {
            guard let rule = ruleSet.rules.rule(for: event.metric), rule.counts(event) else { continue }
            counted.append(
                (
                    index, event, rule,
                    Day(
                        customer: event.customerID, ruleID: rule.ruleID,
                        day: Int((event.occurredAt.timeIntervalSince1970 / 86_400).rounded(.down)))
                ))
        }
        guard !counted.isEmpty else { return [] }
        let days = Array(Set(counted.map(\.day))).sorted { $0.order < $1.order }
        let dayNumbers = days.map(\.day)
        // Lock (or create) each day's row and read its totals in one statement, through the primary
        // key row by row, in `Day.order` (an upsert whose update changes nothing but takes the lock).
        var totals: [Day: (units: Double, points: Int64)] = [:]
        for try await (customer, ruleID, day, units, points) in try await unit.connection.send(
            """
            INSERT INTO fitpoints_daily_earnings AS d (customer_id, rule_id, day)
            SELECT c, r, DATE '1970-01-01' + n FROM unnest(\(days.map(\.customer))::uuid[],
                \(days.map(\.ruleID))::text[], \(dayNumbers)::int[]) AS k(c, r, n)
            ON CONFLICT (customer_id, rule_id, day) DO UPDATE SET units = d.units
            RETURNING d.customer_id, d.rule_id, d.day - DATE '1970-01-01', d.units, d.points
            """, logger: unit.logger
        ).decode((UUID, String, Int32, Double, Int64).self) {
            totals[Day(customer: customer, ruleID: ruleID, day: Int(day))] = (units, points)
        }

        var transfers: [Ledger.Transfer] = []
        var paid: [(Int, Int64)] = []
        for item in counted.sorted(by: {
            ($0.event.occurredAt, $0.event.eventID) < ($1.event.occurredAt, $1.event.eventID)
        }) {
            var total = totals[item.day] ?? (0, 0)
            total.units += item.event.value
            let due = item.rule.due(units: total.units, paid: total.points)
            total.points += due
            totals[item.day] = total
            guard due > 0 else { continue }
            paid.append((item.index, due))
            transfers.append(
                Ledger.Transfer(
                    .earning, from: Ledger.issuance, to: Ledger.wallet(item.event.customerID), amount: due,
                    ruleID: item.rule.ruleID,
                    ruleVersion: ruleSet.version, sourceEventID: item.event.eventID))
        }
        try await unit.execute(
            """
            INSERT INTO fitpoints_daily_earnings AS d (customer_id, rule_id, day, units, points)
            SELECT c, r, DATE '1970-01-01' + n, u, p
            FROM unnest(\(days.map(\.customer))::uuid[], \(days.map(\.ruleID))::text[], \(dayNumbers)::int[],
                 \(days.map { totals[$0]?.units ?? 0 })::float8[], \(days.map { totals[$0]?.points ?? 0 })::bigint[])
                     AS k(c, r, n, u, p)
            ON CONFLICT (customer_id, rule_id, day) DO UPDATE SET units = excluded.units, points = excluded.points
            """)
        try await Ledger.post(transfers, movement: batchID, in: unit)
        return paid
    }
}
