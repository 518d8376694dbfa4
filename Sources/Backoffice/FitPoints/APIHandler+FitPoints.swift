import BackofficeAPI
import BackofficePlatform
import Foundation

extension WalletBalance {
    var api: Components.Schemas.FitPointsBalance {
        Components.Schemas.FitPointsBalance(
            customerId: customerID.text, balance: balance, credited: credited, debited: debited, updatedAt: updatedAt)
    }
}

extension LedgerEntry {
    var api: Components.Schemas.LedgerEntry {
        get throws {
            Components.Schemas.LedgerEntry(
                id: String(id), movementId: movementID.text, kind: try .init(known: kind.rawValue), points: points,
                counterparty: try .init(known: counterparty.rawValue), reason: reason, ruleId: ruleID,
                ruleVersion: ruleVersion,
                sourceEventId: sourceEventID, challengeId: challengeID?.text, createdAt: createdAt)
        }
    }
}

extension APIHandler {
    func getFitPoints(_ input: Operations.GetFitPoints.Input) async throws -> Operations.GetFitPoints.Output {
        .ok(
            .init(
                body: .json(
                    try await read(GetWalletBalance(customerID: try parseID(input.path.customerId, "customer_id"))).api)
            ))
    }

    func fitPointsLedger(_ input: Operations.FitPointsLedger.Input) async throws -> Operations.FitPointsLedger.Output {
        let limit = try pageLimit(input.query.limit)
        let customerID = try parseID(input.path.customerId, "customer_id")
        let entries = try await read(
            WalletLedger(customerID: customerID, before: try Cursor.number(input.query.cursor), limit: limit + 1))
        let (items, next) = keysetPage(entries, limit: limit) { [String($0.id)] }
        return .ok(.init(body: .json(.init(items: try items.map { try $0.api }, nextCursor: next))))
    }

    func adjustFitPoints(_ input: Operations.AdjustFitPoints.Input) async throws -> Operations.AdjustFitPoints.Output {
        let body: Components.Schemas.FitPointsAdjustmentRequest = try json(input.body)
        let customerID = try parseID(input.path.customerId, "customer_id")
        let adjustment = try await changeUnlessHeld(
            AdjustFitPoints(customerID: customerID, points: body.points, reason: body.reason), on: customerID,
            body: body, status: 201
        ) { entry, balance in Components.Schemas.FitPointsAdjustment(entry: try entry.api, balance: balance.api) }
        switch adjustment {
        case .done(let adjustment): return .created(.init(body: .json(adjustment)))
        case .held(let request): return .accepted(.init(body: .json(request)))
        }
    }
}

extension EarningRules.Draft {
    package init(_ draft: Components.Schemas.EarningRulesDraft) {
        self.init(
            metrics: (draft.metrics ?? []).map {
                .init(
                    metric: $0.metric, pointsPerUnit: $0.pointsPerUnit, dailyCap: $0.dailyCap,
                    minIntensity: $0.minIntensity)
            },
            badges: (draft.badges ?? []).map { .init(name: $0.badge, points: $0.points) },
            events: (draft.events ?? []).map { .init(name: $0.event, points: $0.points) })
    }
}

extension EarningRuleSet {
    var api: Components.Schemas.EarningRuleSet {
        Components.Schemas.EarningRuleSet(
            version: version, createdAt: createdAt,
            metrics: rules.metrics.map {
                .init(
                    ruleId: $0.ruleID, metric: $0.metric.rawValue, pointsPerUnit: $0.pointsPerUnit,
                    dailyCap: $0.dailyCap,
                    minIntensity: $0.minIntensity?.rawValue)
            },
            badges: rules.badges.map { .init(ruleId: $0.ruleID, name: $0.badge, points: $0.points) },
            events: rules.events.map { .init(ruleId: $0.ruleID, name: $0.event.rawValue, points: $0.points) })
    }
}

extension APIHandler {
    func getEarningRules(_ input: Operations.GetEarningRules.Input) async throws -> Operations.GetEarningRules.Output {
        .ok(.init(body: .json(try await read(CurrentEarningRules()).api)))
    }

    func setEarningRules(_ input: Operations.SetEarningRules.Input) async throws -> Operations.SetEarningRules.Output {
        let body: Components.Schemas.EarningRulesDraft = try json(input.body)
        let set = try await changeUnlessHeld(
            SetEarningRules(EarningRules.Draft(body), reason: body.reason), body: body
        ) { ruleSet, outcome in StoredResponse(status: outcome == .set ? 201 : 200, body: ruleSet.api) }
        switch set {
        case .done(let stored) where stored.status == 201: return .created(.init(body: .json(stored.body)))
        case .done(let stored): return .ok(.init(body: .json(stored.body)))
        case .held(let request): return .accepted(.init(body: .json(request)))
        }
    }

    func simulateEarningRules(_ input: Operations.SimulateEarningRules.Input) async throws
        -> Operations.SimulateEarningRules.Output
    {
        let body: Components.Schemas.EarningRulesSimulationRequest = try json(input.body)
        let outcome = try await read(SimulateEarningRules(EarningRules.Draft(body.rules), days: body.days ?? 30))
        return .ok(
            .init(
                body: .json(
                    .init(
                        since: outcome.since, until: outcome.until,
                        lines: outcome.lines.map {
                            .init(
                                ruleId: $0.ruleID, metric: $0.metric?.rawValue, events: $0.events,
                                customers: $0.customers, points: $0.points,
                                currentPoints: $0.currentPoints)
                        }, points: outcome.points, currentPoints: outcome.currentPoints))))
    }
}
