import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// Billing (backend managers; auditors and platform admins read): the subscriptions by status,
    /// past due first, and the renewal charges declined lately; a customer's subscription with its
    /// invoices, payments, refunds and disputes, and a manager's confirmed cancellation (with a full
    /// or prorated refund) and refund of an invoice, whole or part — the API's use cases, which
    /// call the payment provider with no transaction held (`payments`, the API's).
    func registerBilling(on group: RouterGroup<AppRequestContext>, payments: any PaymentGateway) {
        section("billing", "Billing", needs: ListSubscriptions.action, on: group) { console in
            try await console.billingPage()
        }
        get("accounts/{id}/subscription", on: group) { console in
            try await console.subscriptionPage(customer: try console.routeID(), issues: [])
        }
        for move in BillingMove.allCases {
            post("accounts/{id}/subscription/\(move.rawValue)", on: group, holdsTransaction: false) { console in
                let customer = try console.routeID()
                return try await console.submit {
                    let flash = try await console.perform(move, payments: payments)
                    return console.redirect("/console/accounts/\(customer.text)/subscription", flash: flash)
                } refused: { issues in
                    try await console.subscriptionPage(customer: customer, issues: issues, values: console.form.values)
                }
            }
        }
    }
}

/// What a manager does to a subscription from its page.
enum BillingMove: String, CaseIterable {
    case cancel, refund
}

extension ConsoleRequest {
    /// The subscriptions in the chosen status (past due unless told), latest changed first, and the
    /// renewal charges declined lately.
    fileprivate func billingPage() async throws -> ConsoleAnswer {
        let status = try BillingBoard.status(form.text("status"))
        let rows = try await read(
            ListSubscriptions(
                status: status, customerID: nil, after: try Cursor.timeAndID(form.text("cursor")),
                limit: Console.pageSize + 1))
        let (shown, next) = keysetPage(rows, limit: Console.pageSize) { Cursor.timeAndID($0.updatedAt, $0.id) }
        let declined = try await read(DeclinedRenewals(limit: 20))
        let emails = try await read(CustomerEmails(ids: shown.map(\.customerID) + declined.map(\.customerID)))
        var data: [String: Any] = [
            "subscriptions": shown.map {
                var view = SubscriptionView($0)
                view.email = emails[$0.customerID]
                return view
            },
            "hasSubscriptions": !shown.isEmpty,
            "state": status.map(BillingBoard.label) ?? "Every status",
            "tabsHTML": ConsoleNavigation.links(
                BillingBoard.tabs.map {
                    .link(
                        href: ConsoleLinks.path("/console/billing", ["status": $0?.rawValue ?? "any"]),
                        label: $0.map(BillingBoard.label) ?? "Every status", current: $0 == status)
                }),
            "declined": declined.map {
                var view = DeclinedRenewalView($0)
                view.email = emails[$0.customerID]
                return view
            },
            "hasDeclined": !declined.isEmpty,
        ]
        if let next {
            data["next"] = ConsoleLinks.path(
                "/console/billing", ["status": status?.rawValue ?? "any", "cursor": next])
        }
        return page("billing", title: "Billing", data)
    }

    /// A customer's subscriptions, the chosen one (the latest unless told) with its invoices and
    /// their refunds, and the forms the role may use; `issues` next to a refused form's fields (422).
    fileprivate func subscriptionPage(customer: UUID, issues: [FieldIssue], values: [String: String] = [:])
        async throws -> ConsoleAnswer
    {
        let all = try await read(ListSubscriptions(status: nil, customerID: customer, after: nil, limit: 20))
        let chosen = form.text("subscription").flatMap(UUID.init(uuidString:))
        var data: [String: Any] = [
            "customer": customer.text, "values": values, "hasSubscriptions": !all.isEmpty,
            "subscriptions": all.map(SubscriptionView.init),
        ]
        if may(GetCustomerAccount.action) { data["email"] = try await read(GetCustomerAccount(id: customer)).email }
        if let shown = all.first(where: { $0.id == chosen }) ?? all.first {
            let (subscription, invoices) = try await read(GetSubscription(id: shown.id))
            let refundable = invoices.filter { $0.status == "paid" && $0.amountCents > $0.refundedCents }
            data["subscription"] = SubscriptionView(subscription)
            data["invoices"] = invoices.map(InvoiceView.init)
            data["hasInvoices"] = !invoices.isEmpty
            data["refundable"] = refundable.map {
                ["id": $0.id.text, "label": InvoiceView($0).refundLabel, "selected": values["invoice"] == $0.id.text]
            }
            data["canRefund"] = !refundable.isEmpty && may(RefundInvoice.action)
            data["canCancel"] = subscription.status.isLive && may(CancelSubscription.action)
        }
        FormRefusal(issues).add(to: &data)
        return page(
            "subscription", title: "Subscription", status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }

    /// Runs a manager's move with the form's fields, once confirmed; the flash that says what it did.
    fileprivate func perform(_ move: BillingMove, payments: any PaymentGateway) async throws -> String {
        try form.confirm(move.rawValue)
        let reason = form.text("reason") ?? ""
        switch move {
        case .cancel:
            let refund = try CancelSubscription.Refund(known: form.text("refund") ?? "none")
            let outcome = try await runStaged(
                CancelSubscription(
                    subscriptionID: try formID("subscription"), reason: reason, refund: refund, payments: payments))
            if let refunded = outcome.refund, refunded.status == .failed {
                throw BillingBoard.declined(refunded.failureCode)
            }
            return "The subscription is canceled"
                + (outcome.refund.map { ", \(Money.dollars($0.amountCents)) refunded" } ?? "") + "."
        case .refund:
            let amount = try BillingBoard.cents(form.text("amount"))
            let refund = try await runStaged(
                RefundInvoice(invoiceID: try formID("invoice"), amountCents: amount, reason: reason, payments: payments)
            )
            guard refund.status != .failed else { throw BillingBoard.declined(refund.failureCode) }
            return "\(Money.dollars(refund.amountCents)) refunded."
        }
    }

    /// A form's id field, 422 naming it when it is not one.
    private func formID(_ field: String) throws -> UUID {
        guard let text = form.text(field), let id = UUID(uuidString: text) else {
            throw DomainError.invalid([FieldIssue(field: field, code: "required", message: "choose one")])
        }
        return id
    }
}
