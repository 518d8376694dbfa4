import BackofficeAPI
import BackofficePlatform
import Foundation

extension Customer {
    /// The contract's account; a status the contract does not know throws (never a silent default).
    var api: Components.Schemas.Customer {
        get throws {
            Components.Schemas.Customer(
                id: id.text, email: email, displayName: displayName, status: try .init(known: status.rawValue),
                subscription: try .init(known: subscription.rawValue), renewsAt: renewsAt, failedLogins: failedLogins,
                createdAt: createdAt, updatedAt: updatedAt, deletedAt: deletedAt, lock: try lock?.api, version: version)
        }
    }
}

extension AccountLock {
    var api: Components.Schemas.Lock {
        get throws {
            Components.Schemas.Lock(
                id: id.text, cause: try .init(known: cause.rawValue), reason: reason, failedAttempts: failedAttempts,
                lockedBy: lockedBy?.text,
                lockedAt: lockedAt, until: until, liftedAt: liftedAt, liftedBy: liftedBy?.text, liftReason: liftReason)
        }
    }
}

extension Appeal {
    var api: Components.Schemas.Appeal {
        get throws {
            Components.Schemas.Appeal(
                id: id.text, customerId: customerID.text, lockId: lockID?.text, caseId: caseID?.text, message: message,
                status: try .init(known: status.rawValue),
                createdAt: createdAt, resolvedAt: resolvedAt, resolvedBy: resolvedBy?.text,
                resolutionReason: resolutionReason)
        }
    }
}

extension APIHandler {
    func listCustomers(_ input: Operations.ListCustomers.Input) async throws -> Operations.ListCustomers.Output {
        let q = input.query
        let request = CustomerListRequest(
            limit: q.limit, cursor: q.cursor, status: q.status?.rawValue, emailPrefix: q.emailPrefix,
            includeDeleted: q.includeDeleted)
        let (items, nextCursor) = try await request.run(database, context: try context())
        return .ok(.init(body: .json(.init(items: try items.map { try $0.api }, nextCursor: nextCursor))))
    }

    func syncCustomer(_ input: Operations.SyncCustomer.Input) async throws -> Operations.SyncCustomer.Output {
        let body: Components.Schemas.CustomerSync = try json(input.body)
        let sync = SyncCustomer(
            id: try parseID(body.id, "id"), email: body.email, displayName: body.displayName,
            subscription: try body.subscription.map { try .init(known: $0.rawValue) }, renewsAt: body.renewsAt)
        let stored = try await change(sync, body: body) {
            customer, outcome in StoredResponse(status: outcome == .created ? 201 : 200, body: try customer.api)
        }
        let etag = EntityTag.of(stored.body.version)
        return stored.status == 201
            ? .created(.init(headers: .init(eTag: etag), body: .json(stored.body)))
            : .ok(.init(headers: .init(eTag: etag), body: .json(stored.body)))
    }

    func getCustomer(_ input: Operations.GetCustomer.Input) async throws -> Operations.GetCustomer.Output {
        let customer = try await read(GetCustomerAccount(id: try parseID(input.path.customerId, "customer_id")))
        return .ok(.init(headers: .init(eTag: customer.etag), body: .json(try customer.api)))
    }

    func deleteCustomer(_ input: Operations.DeleteCustomer.Input) async throws -> Operations.DeleteCustomer.Output {
        .ok(try await reasonedMove(.delete, input.path.customerId, input.headers.ifMatch, try json(input.body)))
    }

    func lockCustomer(_ input: Operations.LockCustomer.Input) async throws -> Operations.LockCustomer.Output {
        let body: Components.Schemas.LockRequest = try json(input.body)
        return .ok(
            try await moveAccount(
                .lock, input.path.customerId, reason: body.reason, until: body.until, ifMatch: input.headers.ifMatch,
                body: body))
    }

    func unlockCustomer(_ input: Operations.UnlockCustomer.Input) async throws -> Operations.UnlockCustomer.Output {
        .ok(try await reasonedMove(.unlock, input.path.customerId, input.headers.ifMatch, try json(input.body)))
    }

    func restoreCustomer(_ input: Operations.RestoreCustomer.Input) async throws -> Operations.RestoreCustomer.Output {
        .ok(try await reasonedMove(.restore, input.path.customerId, input.headers.ifMatch, try json(input.body)))
    }

    func eraseCustomer(_ input: Operations.EraseCustomer.Input) async throws -> Operations.EraseCustomer.Output {
        let body: Components.Schemas.ReasonRequest = try json(input.body)
        let id = try parseID(input.path.customerId, "customer_id")
        switch try await changeUnlessHeld(
            EraseDeletedAccount(customerID: id, reason: body.reason), on: id, body: body,
            respond: {
                Components.Schemas.ErasedAccount(
                    customerId: $0.customerID.text, deletedAt: $0.deletedAt, erasedAt: $0.erasedAt, erased: $0.erased,
                    kept: $0.kept)
            })
        {
        case .done(let erased): return .ok(.init(body: .json(erased)))
        case .held(let request): return .accepted(.init(body: .json(request)))
        }
    }

    /// A move whose request is a reason alone (delete, unlock, restore); the body is decoded before
    /// the id is parsed, as every handler does.
    private func reasonedMove(
        _ move: AccountMove, _ customerID: String, _ ifMatch: String?, _ body: Components.Schemas.ReasonRequest
    ) async throws -> Components.Responses.CustomerChanged {
        try await moveAccount(move, customerID, reason: body.reason, until: nil, ifMatch: ifMatch, body: body)
    }

    /// Runs a move of an account (lock, unlock, delete, restore) and answers the account after it.
    private func moveAccount(
        _ move: AccountMove, _ customerID: String, reason: String?, until: Date?, ifMatch: String?,
        body: some Encodable & Sendable
    ) async throws -> Components.Responses.CustomerChanged {
        let id = try parseID(customerID, "customer_id")
        let transition = TransitionAccount(customerID: id, move: move, reason: reason, until: until, ifMatch: ifMatch)
        let customer = try await change(transition, on: id, body: body) { try $0.api }
        return .init(headers: .init(eTag: EntityTag.of(customer.version)), body: .json(customer))
    }

    func reportLoginAttempt(_ input: Operations.ReportLoginAttempt.Input) async throws
        -> Operations.ReportLoginAttempt.Output
    {
        let body: Components.Schemas.LoginAttempt = try json(input.body)
        let id = try parseID(input.path.customerId, "customer_id")
        let customer = try await change(
            ReportLoginAttempt(customerID: id, succeeded: body.succeeded), on: id, body: body
        ) { try $0.api }
        return .ok(.init(body: .json(customer)))
    }

    func reportPasswordReset(_ input: Operations.ReportPasswordReset.Input) async throws
        -> Operations.ReportPasswordReset.Output
    {
        let body: Components.Schemas.PasswordReset = try json(input.body)
        let id = try parseID(input.path.customerId, "customer_id")
        let customer = try await change(
            ReportPasswordReset(customerID: id), on: id, body: body
        ) { try $0.api }
        return .ok(.init(body: .json(customer)))
    }

    func fileAppeal(_ input: Operations.FileAppeal.Input) async throws -> Operations.FileAppeal.Output {
        let body: Components.Schemas.AppealCreate = try json(input.body)
        let id = try parseID(input.path.customerId, "customer_id")
        let appeal = try await change(
            FileAppeal(customerID: id, message: body.message, caseID: try parseID(body.caseId, "case_id")), on: id,
            body: body, status: 201
        ) { try $0.api }
        return .created(.init(body: .json(appeal)))
    }

    func customerHistory(_ input: Operations.CustomerHistory.Input) async throws -> Operations.CustomerHistory.Output {
        let limit = try pageLimit(input.query.limit)
        let afterID = try Cursor.number(input.query.cursor) ?? 0
        let events = try await read(
            CustomerAccountHistory(
                id: try parseID(input.path.customerId, "customer_id"), afterID: afterID, limit: limit + 1))
        return .ok(.init(body: .json(try auditPage(events, limit: limit))))
    }

    func listAppeals(_ input: Operations.ListAppeals.Input) async throws -> Operations.ListAppeals.Output {
        let limit = try pageLimit(input.query.limit)
        let after = try Cursor.timeAndID(input.query.cursor)
        let status = try input.query.status.map { try AppealStatus(known: $0.rawValue) }
        let appeals = try await read(ListAppeals(status: status, after: after, limit: limit + 1))
        let (items, next) = keysetPage(appeals, limit: limit) { Cursor.timeAndID($0.createdAt, $0.id) }
        return .ok(.init(body: .json(.init(items: try items.map { try $0.api }, nextCursor: next))))
    }

    func getAppeal(_ input: Operations.GetAppeal.Input) async throws -> Operations.GetAppeal.Output {
        let appeal = try await read(GetAppeal(id: try parseID(input.path.appealId, "appeal_id")))
        return .ok(.init(body: .json(try appeal.api)))
    }

    func resolveAppeal(_ input: Operations.ResolveAppeal.Input) async throws -> Operations.ResolveAppeal.Output {
        let body: Components.Schemas.AppealResolution = try json(input.body)
        let id = try parseID(input.path.appealId, "appeal_id")
        let appeal = try await change(
            ResolveAppeal(appealID: id, decision: try .init(known: body.decision.rawValue), reason: body.reason),
            on: id, body: body
        ) { try $0.api }
        return .ok(.init(body: .json(appeal)))
    }

    func purgeDeletedAccounts(_ input: Operations.PurgeDeletedAccounts.Input) async throws
        -> Operations.PurgeDeletedAccounts.Output
    {
        let body: Components.Schemas.PurgeRequest = try json(input.body)
        let dryRun = body.dryRun ?? false
        let days = policies.retention.deletedAccountsPurgeAfterDays
        let report = try await change(
            PurgeExpiredData(dryRun: dryRun), body: body
        ) { report in
            Components.Schemas.PurgeReport(
                dryRun: dryRun, retentionDays: days, purged: report.accounts.map(\.text),
                idempotencyKeys: report.idempotencyKeys,
                loginAttempts: report.loginAttempts, signInAttempts: report.signInAttempts,
                stagedImports: report.stagedImports, clientAssertions: report.clientAssertions,
                accessTokens: report.accessTokens)
        }
        return .ok(.init(body: .json(report)))
    }
}

extension APIHandler {
    /// A manager's bulk lock (`BulkAccountLocks`): each account's outcome, in the order asked.
    func lockCustomersInBulk(_ input: Operations.LockCustomersInBulk.Input) async throws
        -> Operations.LockCustomersInBulk.Output
    {
        .ok(.init(body: .json(try await bulkResult(try BulkAccountLocks(json(input.body))))))
    }

    /// A manager's bulk notice (`BulkAccountNotices`), under the request's Idempotency-Key: each
    /// account's outcome, in the order asked.
    func messageCustomersInBulk(_ input: Operations.MessageCustomersInBulk.Input) async throws
        -> Operations.MessageCustomersInBulk.Output
    {
        let bulk = try BulkAccountNotices(json(input.body), idempotencyKey: idempotencyKey)
        return .ok(.init(body: .json(try await bulkResult(bulk))))
    }

    /// A manager's notice to one account (`SendAccountNotice`): 201 with the notice.
    func sendCustomerNotice(_ input: Operations.SendCustomerNotice.Input) async throws
        -> Operations.SendCustomerNotice.Output
    {
        let body: Components.Schemas.NoticeRequest = try json(input.body)
        let customerID = try parseID(input.path.customerId, "customer_id")
        let send = SendAccountNotice(
            customerID: customerID, text: try NoticeText(subject: body.subject, body: body.body), reason: body.reason)
        let notice = try await change(send, on: customerID, body: body, status: 201) { sent in
            guard let notice = sent.notice else { throw DomainError.inconsistent("the notice sent was not returned") }
            return Components.Schemas.AccountNotice(notice)
        }
        return .created(.init(body: .json(notice)))
    }

    /// The notices a customer was sent, newest first (`ListAccountNotices`: the app's read).
    func listCustomerNotices(_ input: Operations.ListCustomerNotices.Input) async throws
        -> Operations.ListCustomerNotices.Output
    {
        let customerID = try parseID(input.path.customerId, "customer_id")
        let (items, next) = try await newestFirst(limit: input.query.limit, cursor: input.query.cursor) {
            ListAccountNotices(customerID: customerID, after: $0, limit: $1)
        } answer: { (notice: AccountNotice) in
            Components.Schemas.AccountNotice(notice)
        }
        return .ok(.init(body: .json(.init(items: items, nextCursor: next))))
    }
}

extension Components.Schemas.AccountNotice {
    /// A notice as the app shows it.
    init(_ notice: AccountNotice) {
        self.init(id: notice.id.text, subject: notice.subject, body: notice.body, sentAt: notice.sentAt)
    }
}

extension BulkAccountLocks {
    /// The bulk a `POST /v1/customers/bulk-lock` body asks for.
    init(_ body: Components.Schemas.BulkLockRequest) throws {
        self.init(
            customerIDs: try parseIDs(body.customerIds, "customer_ids"), reason: body.reason, until: body.until,
            dryRun: body.dryRun)
    }
}

extension BulkAccountNotices {
    /// The bulk a `POST /v1/customers/bulk-message` body asks for, under `idempotencyKey`.
    init(_ body: Components.Schemas.BulkMessageRequest, idempotencyKey: String?) throws {
        self.init(
            customerIDs: try parseIDs(body.customerIds, "customer_ids"), subject: body.subject, body: body.body,
            reason: body.reason, dryRun: body.dryRun, idempotencyKey: idempotencyKey)
    }
}
