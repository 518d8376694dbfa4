import BackofficeAPI
import Foundation

extension Customer {
    var api: Components.Schemas.Customer {
        Components.Schemas.Customer(
            id: id.text, email: email, displayName: displayName, status: .init(rawValue: status.rawValue) ?? .active,
            failedLogins: failedLogins, createdAt: createdAt, updatedAt: updatedAt, deletedAt: deletedAt, lock: lock?.api, version: version)
    }
}

extension AccountLock {
    var api: Components.Schemas.Lock {
        Components.Schemas.Lock(
            id: id.text, cause: .init(rawValue: cause.rawValue) ?? .manual, reason: reason, failedAttempts: failedAttempts,
            lockedBy: lockedBy?.text, lockedAt: lockedAt, until: until, liftedAt: liftedAt, liftedBy: liftedBy?.text, liftReason: liftReason)
    }
}

extension Appeal {
    var api: Components.Schemas.Appeal {
        Components.Schemas.Appeal(
            id: id.text, customerId: customerID.text, lockId: lockID.text, message: message, status: .init(rawValue: status.rawValue) ?? .open,
            createdAt: createdAt, resolvedAt: resolvedAt, resolvedBy: resolvedBy?.text, resolutionReason: resolutionReason)
    }
}

/// The request of an account action, as fingerprinted for Idempotency-Key.
private struct ActionRequest<Body: Encodable>: Encodable {
    let id: String
    let body: Body
}

extension APIHandler {
    func listCustomers(_ input: Operations.ListCustomers.Input) async throws -> Operations.ListCustomers.Output {
        let q = input.query
        let request = CustomerListRequest(
            limit: q.limit, cursor: q.cursor, status: q.status?.rawValue, emailPrefix: q.emailPrefix, includeDeleted: q.includeDeleted)
        let (items, nextCursor) = try await request.run(database, context: try context())
        return .ok(.init(body: .json(.init(items: items.map(\.api), nextCursor: nextCursor))))
    }

    func syncCustomer(_ input: Operations.SyncCustomer.Input) async throws -> Operations.SyncCustomer.Output {
        let context = try context()
        guard case .json(let body) = input.body else { throw Problem.malformed("expected application/json") }
        let operation = SyncCustomer(id: try parseID(body.id, "id"), email: body.email, displayName: body.displayName)
        let stored = try await idempotency.run(
            operation, key: input.headers.idempotencyKey, request: body, operationID: Operations.SyncCustomer.id, context: context
        ) { customer, outcome in
            StoredResponse(status: outcome == .created ? 201 : 200, body: customer.api)
        }
        let etag = EntityTag.of(stored.body.version)
        return stored.status == 201
            ? .created(.init(headers: .init(eTag: etag), body: .json(stored.body)))
            : .ok(.init(headers: .init(eTag: etag), body: .json(stored.body)))
    }

    func getCustomer(_ input: Operations.GetCustomer.Input) async throws -> Operations.GetCustomer.Output {
        let customer = try await AccountQueries(database: database).get(try parseID(input.path.customerId, "customer_id"), context: try context())
        return .ok(.init(headers: .init(eTag: customer.etag), body: .json(customer.api)))
    }

    /// Runs a manager transition with Idempotency-Key replay and returns the account and its ETag.
    private func transition<Operation: AuditedOperation>(
        _ operation: Operation, key: String?, id: String, body: some Encodable, operationID: String
    ) async throws -> (Components.Schemas.Customer, String) where Operation.Output == Customer {
        let stored = try await idempotency.run(
            operation, key: key, request: ActionRequest(id: id, body: body), operationID: operationID, context: try context()
        ) { customer in
            StoredResponse(status: 200, body: customer.api)
        }
        return (stored.body, EntityTag.of(stored.body.version))
    }

    func deleteCustomer(_ input: Operations.DeleteCustomer.Input) async throws -> Operations.DeleteCustomer.Output {
        guard case .json(let body) = input.body else { throw Problem.malformed("expected application/json") }
        let id = try parseID(input.path.customerId, "customer_id")
        let (customer, etag) = try await transition(
            DeleteAccount(customerID: id, reason: body.reason, ifMatch: input.headers.ifMatch), key: input.headers.idempotencyKey,
            id: id.text, body: body, operationID: Operations.DeleteCustomer.id)
        return .ok(.init(headers: .init(eTag: etag), body: .json(customer)))
    }

    func lockCustomer(_ input: Operations.LockCustomer.Input) async throws -> Operations.LockCustomer.Output {
        guard case .json(let body) = input.body else { throw Problem.malformed("expected application/json") }
        let id = try parseID(input.path.customerId, "customer_id")
        let (customer, etag) = try await transition(
            LockAccount(customerID: id, reason: body.reason, until: body.until, ifMatch: input.headers.ifMatch), key: input.headers.idempotencyKey,
            id: id.text, body: body, operationID: Operations.LockCustomer.id)
        return .ok(.init(headers: .init(eTag: etag), body: .json(customer)))
    }

    func unlockCustomer(_ input: Operations.UnlockCustomer.Input) async throws -> Operations.UnlockCustomer.Output {
        guard case .json(let body) = input.body else { throw Problem.malformed("expected application/json") }
        let id = try parseID(input.path.customerId, "customer_id")
        let (customer, etag) = try await transition(
            UnlockAccount(customerID: id, reason: body.reason, ifMatch: input.headers.ifMatch), key: input.headers.idempotencyKey,
            id: id.text, body: body, operationID: Operations.UnlockCustomer.id)
        return .ok(.init(headers: .init(eTag: etag), body: .json(customer)))
    }

    func restoreCustomer(_ input: Operations.RestoreCustomer.Input) async throws -> Operations.RestoreCustomer.Output {
        guard case .json(let body) = input.body else { throw Problem.malformed("expected application/json") }
        let id = try parseID(input.path.customerId, "customer_id")
        let (customer, etag) = try await transition(
            RestoreAccount(customerID: id, reason: body.reason, ifMatch: input.headers.ifMatch), key: input.headers.idempotencyKey,
            id: id.text, body: body, operationID: Operations.RestoreCustomer.id)
        return .ok(.init(headers: .init(eTag: etag), body: .json(customer)))
    }

    func reportLoginAttempt(_ input: Operations.ReportLoginAttempt.Input) async throws -> Operations.ReportLoginAttempt.Output {
        guard case .json(let body) = input.body else { throw Problem.malformed("expected application/json") }
        let id = try parseID(input.path.customerId, "customer_id")
        let (customer, _) = try await transition(
            ReportLoginAttempt(customerID: id, succeeded: body.succeeded), key: input.headers.idempotencyKey, id: id.text, body: body,
            operationID: Operations.ReportLoginAttempt.id)
        return .ok(.init(body: .json(customer)))
    }

    func reportPasswordReset(_ input: Operations.ReportPasswordReset.Input) async throws -> Operations.ReportPasswordReset.Output {
        guard case .json(let body) = input.body else { throw Problem.malformed("expected application/json") }
        let id = try parseID(input.path.customerId, "customer_id")
        let (customer, _) = try await transition(
            ReportPasswordReset(customerID: id), key: input.headers.idempotencyKey, id: id.text, body: body,
            operationID: Operations.ReportPasswordReset.id)
        return .ok(.init(body: .json(customer)))
    }

    func fileAppeal(_ input: Operations.FileAppeal.Input) async throws -> Operations.FileAppeal.Output {
        guard case .json(let body) = input.body else { throw Problem.malformed("expected application/json") }
        let id = try parseID(input.path.customerId, "customer_id")
        let stored = try await idempotency.run(
            FileAppeal(customerID: id, message: body.message), key: input.headers.idempotencyKey, request: ActionRequest(id: id.text, body: body),
            operationID: Operations.FileAppeal.id, context: try context()
        ) { appeal in
            StoredResponse(status: 201, body: appeal.api)
        }
        return .created(.init(body: .json(stored.body)))
    }

    func customerHistory(_ input: Operations.CustomerHistory.Input) async throws -> Operations.CustomerHistory.Output {
        let limit = try pageLimit(input.query.limit)
        let afterID = try Cursor.decode(input.query.cursor, count: 1).flatMap { Int64($0[0]) } ?? 0
        let events = try await AccountQueries(database: database).history(
            try parseID(input.path.customerId, "customer_id"), afterID: afterID, limit: limit + 1, context: try context())
        return .ok(.init(body: .json(auditPage(events, limit: limit))))
    }

    func listAppeals(_ input: Operations.ListAppeals.Input) async throws -> Operations.ListAppeals.Output {
        let limit = try pageLimit(input.query.limit)
        var after: (createdAt: Date, id: UUID)?
        if let parts = try Cursor.decode(input.query.cursor, count: 2), let micros = Int64(parts[0]) {
            after = (Date(timeIntervalSince1970: Double(micros) / 1_000_000), try parseID(parts[1], "cursor"))
        }
        let appeals = try await AccountQueries(database: database).appeals(
            status: input.query.status.flatMap { AppealStatus(rawValue: $0.rawValue) }, after: after, limit: limit + 1, context: try context())
        let (items, next) = keysetPage(appeals, limit: limit) {
            [String(Int64(($0.createdAt.timeIntervalSince1970 * 1_000_000).rounded())), $0.id.text]
        }
        return .ok(.init(body: .json(.init(items: items.map(\.api), nextCursor: next))))
    }

    func resolveAppeal(_ input: Operations.ResolveAppeal.Input) async throws -> Operations.ResolveAppeal.Output {
        guard case .json(let body) = input.body else { throw Problem.malformed("expected application/json") }
        let id = try parseID(input.path.appealId, "appeal_id")
        let stored = try await idempotency.run(
            ResolveAppeal(appealID: id, decision: body.decision == .lift ? .lift : .uphold, reason: body.reason), key: input.headers.idempotencyKey,
            request: ActionRequest(id: id.text, body: body), operationID: Operations.ResolveAppeal.id, context: try context()
        ) { appeal in
            StoredResponse(status: 200, body: appeal.api)
        }
        return .ok(.init(body: .json(stored.body)))
    }

    func purgeDeletedAccounts(_ input: Operations.PurgeDeletedAccounts.Input) async throws -> Operations.PurgeDeletedAccounts.Output {
        guard case .json(let body) = input.body else { throw Problem.malformed("expected application/json") }
        let dryRun = body.dryRun ?? false
        let context = try context()
        let days = context.policies.retention.deletedAccountsPurgeAfterDays
        let stored = try await idempotency.run(
            PurgeExpiredData(dryRun: dryRun), key: input.headers.idempotencyKey, request: body, operationID: Operations.PurgeDeletedAccounts.id,
            context: context
        ) { report in
            StoredResponse(
                status: 200,
                body: Components.Schemas.PurgeReport(
                    dryRun: dryRun, retentionDays: days, purged: report.accounts.map(\.text), idempotencyKeys: report.idempotencyKeys,
                    loginAttempts: report.loginAttempts))
        }
        return .ok(.init(body: .json(stored.body)))
    }
}
