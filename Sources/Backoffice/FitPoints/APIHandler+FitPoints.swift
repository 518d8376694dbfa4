import BackofficeAPI
import Foundation

extension WalletBalance {
    var api: Components.Schemas.FitPointsBalance {
        Components.Schemas.FitPointsBalance(customerId: customerID.text, balance: balance, credited: credited, debited: debited, updatedAt: updatedAt)
    }
}

extension LedgerEntry {
    var api: Components.Schemas.LedgerEntry {
        get throws {
            Components.Schemas.LedgerEntry(
                id: String(id), movementId: movementID.text, kind: try .init(known: kind.rawValue), points: points,
                counterparty: try .init(known: counterparty.rawValue), reason: reason, ruleId: ruleID, ruleVersion: ruleVersion,
                sourceEventId: sourceEventID, challengeId: challengeID?.text, createdAt: createdAt)
        }
    }
}

extension APIHandler {
    func getFitPoints(_ input: Operations.GetFitPoints.Input) async throws -> Operations.GetFitPoints.Output {
        .ok(.init(body: .json(try await read(GetWalletBalance(customerID: try parseID(input.path.customerId, "customer_id"))).api)))
    }

    func fitPointsLedger(_ input: Operations.FitPointsLedger.Input) async throws -> Operations.FitPointsLedger.Output {
        let limit = try pageLimit(input.query.limit)
        let customerID = try parseID(input.path.customerId, "customer_id")
        let entries = try await read(WalletLedger(customerID: customerID, before: try Cursor.number(input.query.cursor), limit: limit + 1))
        let (items, next) = keysetPage(entries, limit: limit) { [String($0.id)] }
        return .ok(.init(body: .json(.init(items: try items.map { try $0.api }, nextCursor: next))))
    }

    func adjustFitPoints(_ input: Operations.AdjustFitPoints.Input) async throws -> Operations.AdjustFitPoints.Output {
        guard case .json(let body) = input.body else { throw Problem.malformed("expected application/json") }
        let customerID = try parseID(input.path.customerId, "customer_id")
        let adjustment = try await change(
            AdjustFitPoints(customerID: customerID, points: body.points, reason: body.reason), key: input.headers.idempotencyKey,
            operationID: Operations.AdjustFitPoints.id, request: ActionRequest(id: customerID.text, body: body), status: 201
        ) { entry, balance in Components.Schemas.FitPointsAdjustment(entry: try entry.api, balance: balance.api) }
        return .created(.init(body: .json(adjustment)))
    }
}
