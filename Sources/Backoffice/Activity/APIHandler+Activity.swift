import BackofficeAPI
import BackofficePlatform
import Foundation

extension ActivityEventInput {
    init(_ event: Components.Schemas.ActivityEventInput) {
        let d = event.details
        self.init(
            eventID: event.eventId, customerID: event.customerId, metric: event.metric, value: event.value,
            occurredAt: event.occurredAt,
            details: ActivityDetails(
                met: d?.met, bodyweightKg: d?.bodyweightKg, exercise: d?.exercise, weightKg: d?.weightKg, reps: d?.reps,
                sex: d?.sex,
                source: d?.source))
    }
}

extension IngestActivity.Outcome {
    var api: Components.Schemas.ActivityBatchOutcome {
        get throws {
            Components.Schemas.ActivityBatchOutcome(
                batchId: batchID.text, ruleVersion: ruleVersion, accepted: count(.accepted),
                duplicates: count(.duplicate),
                rejected: count(.rejected),
                points: points,
                events: try events.map {
                    .init(
                        eventId: $0.eventID, status: try .init(known: $0.status.rawValue), reason: $0.reason?.code,
                        message: $0.reason?.message,
                        points: $0.status == .accepted ? $0.points : nil)
                })
        }
    }
}

extension APIHandler {
    func ingestActivity(_ input: Operations.IngestActivity.Input) async throws -> Operations.IngestActivity.Output {
        let body: Components.Schemas.ActivityBatch = try json(input.body)
        let outcome = try await change(
            IngestActivity(events: body.events.map(ActivityEventInput.init)), body: body
        ) { try $0.api }
        return .ok(.init(body: .json(outcome)))
    }
}
