import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// Customer accounts (backend managers; auditors read them masked): search by email prefix
    /// and status, an account's page with its open lock and history, and lock (reason, until),
    /// unlock, delete and restore — the API's use cases, with the page's version as `If-Match`.
    func registerAccounts(on group: RouterGroup<AppRequestContext>) {
        section("accounts", "Accounts", needs: ListCustomerAccounts.action, on: group) { console in
            let status = try AccountsPage.status(console.form.text("status"))
            let prefix = console.form.text("email_prefix")
            let canLock = console.may(BulkAccountLocks.action) && console.may(AccountMove.lock.action)
            let canMessage = console.may(BulkAccountNotices.action) && console.may(SendAccountNotice.action)
            var data: [String: Any] = [
                "email_prefix": prefix ?? "",
                "canLock": canLock, "canMessage": canMessage, "canBulk": canLock || canMessage,
                // The notice's Idempotency-Key: the form, or its check's confirmation, sent twice sends nothing twice.
                "noticeKey": UUID().uuidString,
                "statuses": ConsoleOption.all(
                    AccountStatus.allCases.map(\.rawValue), selected: status?.rawValue, any: "Active or locked"),
            ]
            do {
                let page = try await CustomerListRequest(
                    limit: Self.pageSize, cursor: console.form.text("cursor"), status: status?.rawValue,
                    emailPrefix: prefix,
                    includeDeleted: status == .deleted
                ).run(database, context: console.context)
                data["accounts"] = page.items.map(AccountView.init)
                data["hasAccounts"] = !page.items.isEmpty
                if let next = page.nextCursor {
                    data["next"] = ConsoleLinks.path(
                        "/console/accounts", ["status": status?.rawValue, "email_prefix": prefix, "cursor": next])
                }
            } catch DomainError.piiMasked {
                data["prefixError"] = "Your role sees emails masked and cannot search by them."
            }
            return console.page("accounts", title: "Accounts", data)
        }
        get("accounts/{id}", on: group) { console in try await console.accountPage(try console.routeID(), issues: []) }
        section("appeals", "Appeals", needs: ListAppeals.action, on: group) { console in
            try await console.appealsPage(issues: [])
        }
        post("appeals/{id}/resolve", on: group) { console in
            let decision = ResolveAppeal.Decision(rawValue: console.form["decision"] ?? "")
            return try await console.submit {
                guard let decision else {
                    throw DomainError.invalid([
                        FieldIssue(field: "decision", code: "required", message: "choose uphold or lift")
                    ])
                }
                let appeal = try await console.run(
                    ResolveAppeal(
                        appealID: try console.routeID(), decision: decision, reason: console.form.text("reason")))
                return console.redirect("/console/appeals", flash: "The appeal is \(appeal.status.rawValue).")
            } refused: { issues in
                try await console.appealsPage(issues: issues, values: console.form.values)
            }
        }
        post("accounts/{id}/erase", on: group) { console in
            let id = try console.routeID()
            return try await console.submit {
                try console.form.confirm("erase")
                let erase = EraseDeletedAccount(customerID: id, reason: console.form.text("reason"))
                guard case .done = try await console.runUnlessHeld(erase) else {
                    return console.redirect(
                        "/console/accounts/\(id.text)",
                        flash: "Held for a second person's approval: the account is erased when another approver "
                            + "accepts it.")
                }
                return console.redirect("/console/accounts?status=deleted", flash: "The account is erased.")
            } refused: { issues in
                try await console.accountPage(id, issues: issues, values: console.form.values)
            }
        }
        for move in AccountMove.allCases {
            post("accounts/{id}/\(move.rawValue)", on: group) { console in
                let id = try console.routeID()
                let changed = "Someone changed this account after you opened it: reload to see what changed."
                return try await console.submit(reading: FormRefusal.reading(changed: changed)) {
                    let customer = try await console.change(move, account: id)
                    return console.redirect(
                        "/console/accounts/\(id.text)",
                        flash: "The account of \(customer.email) is \(customer.status.rawValue).")
                } refused: { issues in
                    try await console.accountPage(id, issues: issues, values: console.form.values)
                }
            }
        }
    }
}

extension ConsoleRequest {
    /// Runs `move` on the account with the form's reason, until (a lock's) and version; a delete
    /// needs its confirmation.
    fileprivate func change(_ move: AccountMove, account id: UUID) async throws -> Customer {
        let reason = form.text("reason")
        let until = move == .lock ? try ConsoleTime.parse(form.text("until"), field: "until") : nil
        if move == .delete { try form.confirm("delete") }
        return try await run(
            TransitionAccount(customerID: id, move: move, reason: reason, until: until, ifMatch: form["version"]))
    }

    /// The account's page: details, open lock, the moves its state allows and the role may make,
    /// its history; `issues` next to the move's fields (422).
    fileprivate func accountPage(_ id: UUID, issues: [FieldIssue], values: [String: String] = [:]) async throws
        -> ConsoleAnswer
    {
        let customer = try await read(GetCustomerAccount(id: id))
        var data: [String: Any] = [
            "account": AccountView(customer), "values": values, "version": customer.etag,
            "canFitPoints": may(GetWalletBalance.action), "canHealth": may(ReadHealthProfile.action),
            "canBilling": may(GetSubscription.action),
        ]
        FormRefusal(issues).add(to: &data)
        if may(ReadAuthorHistory.action) {
            let (history, threshold) = try await read(ReadAuthorHistory(customerID: id))
            data["moderation"] = [
                "upheld": history.upheldCases, "recent": history.recentUpheldCases, "locks": history.locks,
                "repeatOffender": history.repeatOffender, "threshold": threshold.upheldCases, "days": threshold.days,
            ]
        }
        if let lock = customer.lock {
            var shown: [String: Any] = [
                "reason": lock.reason, "at": ConsoleTime.text(lock.lockedAt), "cause": lock.cause.rawValue,
            ]
            if let until = lock.until { shown["until"] = ConsoleTime.text(until) }
            data["lock"] = shown
        }
        for move in AccountMove.allCases
        where move.target(from: customer.status, hasOpenLock: customer.lock != nil) != nil && may(move.action) {
            data["can_\(move.rawValue)"] = true
        }
        if customer.status == .deleted && may(EraseDeletedAccount.action) { data["can_erase"] = true }
        let pending = try await pendingApprovals(on: "customer", id.text)
        (data["pending"], data["hasPending"]) = (pending, !pending.isEmpty)
        if may(CustomerAccountHistory.action) {
            let events = try await read(CustomerAccountHistory(id: id, afterID: 0, limit: 100))
            data["trail"] = events.map(AuditEventView.init)
            data["hasTrail"] = !events.isEmpty
        }
        return page("account", title: customer.email, status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }
}

extension ConsoleRequest {
    /// The open appeals, oldest first, each with its account and a resolve form (`issues` next
    /// to the fields of the one just refused, 422).
    fileprivate func appealsPage(issues: [FieldIssue], values: [String: String] = [:]) async throws -> ConsoleAnswer {
        let appeals = try await read(
            ListAppeals(status: .open, after: try Cursor.timeAndID(form.text("cursor")), limit: Console.pageSize + 1))
        let (shown, next) = keysetPage(appeals, limit: Console.pageSize) { Cursor.timeAndID($0.createdAt, $0.id) }
        var data: [String: Any] = [
            "appeals": shown.map { appeal in
                [
                    "id": appeal.id.text, "customer": appeal.customerID.text, "message": appeal.message,
                    "filed": ConsoleTime.text(appeal.createdAt), "refused": values["appeal"] == appeal.id.text,
                ] as [String: Any]
            },
            "hasAppeals": !shown.isEmpty, "values": values,
        ]
        if let next { data["next"] = ConsoleLinks.path("/console/appeals", ["cursor": next]) }
        FormRefusal(issues).add(to: &data)
        return page("appeals", title: "Appeals", status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }
}

/// The accounts pages' filter.
enum AccountsPage {
    static func status(_ text: String?) throws -> AccountStatus? {
        guard let text else { return nil }
        guard let status = AccountStatus(rawValue: text) else {
            throw DomainError.invalid([
                FieldIssue(field: "status", code: "unknown_status", message: "must be active, locked or deleted")
            ])
        }
        return status
    }
}

/// An account as the list and its page show it (masked already for roles that see PII masked).
struct AccountView {
    let id: String, email: String, displayName: String, status: String, subscription: String, created: ShownTime,
        failedLogins: Int, selectable: Bool

    init(_ customer: Customer) {
        id = customer.id.text
        email = customer.email
        displayName = customer.displayName
        status = customer.status.rawValue
        subscription = customer.subscription.rawValue
        created = ConsoleTime.text(customer.createdAt)
        failedLogins = customer.failedLogins
        selectable = customer.status != .deleted
    }
}
