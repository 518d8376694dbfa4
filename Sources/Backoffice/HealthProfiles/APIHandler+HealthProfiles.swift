import BackofficeAPI
import BackofficePlatform
import Foundation
import OpenAPIRuntime

extension HealthEntry {
    init(_ api: Components.Schemas.HealthProfileSync) throws {
        self.init(
            heightCM: api.heightCm, weightKG: api.weightKg, birthYear: api.birthYear,
            sex: try api.sex.map { try .init(known: $0.rawValue) } ?? .notSaid,
            weightGoal: try .init(known: api.weightGoal.rawValue), targetWeightKG: api.targetWeightKg,
            targetDay: api.targetDate, dailyCalorieGoal: api.dailyCalorieGoal,
            activityLevel: try .init(known: api.activityLevel.rawValue))
    }
}

extension CalorieReview {
    var api: Components.Schemas.CalorieReview {
        get throws {
            .init(
                basalMetabolicRateKcal: basalMetabolicRate, dailyEnergyKcal: dailyEnergy,
                plannedLossKgPerWeek: plannedLossPerWeek.map { ($0 * 100).rounded() / 100 },
                flags: try flags.map { try .init(known: $0.rawValue) })
        }
    }
}

extension HealthProfileRead {
    func api(at now: Date) throws -> Components.Schemas.HealthProfile {
        Components.Schemas.HealthProfile(
            customerId: customerID.text, version: version, syncedAt: syncedAt, heightCm: values?.heightCM,
            weightKg: values.map { Double($0.weightHG) / 10 }, birthYear: values?.birthYear,
            age: values?.age(at: now), sex: try values.map { try .init(known: $0.sex.rawValue) },
            weightGoal: try .init(known: weightGoal.rawValue),
            targetWeightKg: values?.targetWeightHG.map { Double($0) / 10 },
            targetDate: values?.targetDate.map(HealthEntry.dayText), dailyCalorieGoal: values?.dailyCalorieGoal,
            activityLevel: try .init(known: activityLevel.rawValue),
            weights: values == nil ? nil : weights.map { .init(at: $0.at, weightKg: Double($0.weightHG) / 10) },
            ranges: ranges.map {
                .init(
                    heightCm: $0.heightCM, weightKg: $0.weightKG, age: $0.age, targetWeightKg: $0.targetWeightKG,
                    dailyCalorieGoal: $0.dailyCalorieGoal)
            }, flags: try flags.map { try .init(known: $0.rawValue) }, review: try review?.api, accessId: accessID)
    }
}

extension HealthAccess {
    var api: Components.Schemas.HealthAccess {
        get throws {
            .init(
                id: id, occurredAt: occurredAt, actorId: actorID?.text, actorRole: actorRole, purpose: purpose,
                via: try .init(known: via))
        }
    }
}

extension APIHandler {
    func syncHealthProfile(_ input: Operations.SyncHealthProfile.Input) async throws
        -> Operations.SyncHealthProfile.Output
    {
        let body: Components.Schemas.HealthProfileSync = try json(input.body)
        let id = try parseID(input.path.customerId, "customer_id")
        // Never through the idempotency store (a key sent anyway is not used): nothing of the request
        // or its answer is kept; the same values again change nothing.
        let synced = try await database.run(
            SyncHealthProfile(customerID: id, entry: try HealthEntry(body)), context: context())
        let answer = Components.Schemas.HealthProfileSynced(
            customerId: synced.customerID.text, version: synced.version, changed: synced.changed,
            flags: try synced.review.flags.map { try .init(known: $0.rawValue) })
        return .ok(.init(body: .json(answer)))
    }

    func getHealthProfile(_ input: Operations.GetHealthProfile.Input) async throws
        -> Operations.GetHealthProfile.Output
    {
        let id = try parseID(input.path.customerId, "customer_id")
        // The read is recorded before this answer, also when there is no profile to show.
        guard let read = try await read(ReadHealthProfile(customerID: id, purpose: input.query.purpose)) else {
            throw DomainError.notFound("health profile")
        }
        return .ok(.init(headers: .init(cacheControl: "no-store"), body: .json(try read.api(at: now))))
    }

    func listHealthProfileAccesses(_ input: Operations.ListHealthProfileAccesses.Input) async throws
        -> Operations.ListHealthProfileAccesses.Output
    {
        let limit = try pageLimit(input.query.limit)
        let accesses = try await read(
            ListHealthProfileAccesses(
                customerID: try parseID(input.path.customerId, "customer_id"),
                beforeID: try Cursor.number(input.query.cursor), limit: limit + 1))
        let (items, next) = keysetPage(accesses, limit: limit) { [String($0.id)] }
        return .ok(.init(body: .json(.init(items: try items.map { try $0.api }, nextCursor: next))))
    }

    func exportHealthAccessLog(_ input: Operations.ExportHealthAccessLog.Input) async throws
        -> Operations.ExportHealthAccessLog.Output
    {
        let lines = try await read(
            ExportAccessLog(database: database, since: input.query.since, until: input.query.until))
        return .ok(.init(body: .applicationJsonl(HTTPBody(lines, length: .unknown, iterationBehavior: .single))))
    }

    func verifyHealthAccessLog(_ input: Operations.VerifyHealthAccessLog.Input) async throws
        -> Operations.VerifyHealthAccessLog.Output
    {
        let body: Components.Schemas.VerifyRequest = try json(input.body)
        let report = try await read(VerifyAccessLog(database: database, checkpoint: body.heads))
        return .ok(.init(body: .json(try report.api)))
    }
}
