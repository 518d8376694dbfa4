import BackofficeAPI
import BackofficePlatform
import Foundation

extension APIHandler {
    func listSubscriptions(_ input: Operations.ListSubscriptions.Input) async throws
        -> Operations.ListSubscriptions.Output
    {
        let status = try input.query.status.map { try SubscriptionRecord.Status(known: $0.rawValue) }
        let customerID = try input.query.customerId.map { try parseID($0, "customer_id") }
        let (items, next) = try await newestFirst(limit: input.query.limit, cursor: input.query.cursor) {
            ListSubscriptions(status: status, customerID: customerID, after: $0, limit: $1)
        } answer: {
            try $0.api()
        }
        return .ok(.init(body: .json(.init(items: items, nextCursor: next))))
    }

    func getSubscription(_ input: Operations.GetSubscription.Input) async throws -> Operations.GetSubscription.Output {
        let (subscription, invoices) = try await read(
            GetSubscription(id: try parseID(input.path.subscriptionId, "subscription_id")))
        return .ok(
            .init(
                headers: .init(eTag: EntityTag.of(subscription.version)),
                body: .json(.init(subscription: try subscription.api(), invoices: try invoices.map { try $0.api }))))
    }

    /// A manager's cancellation (`CancelSubscription`), staged when it refunds; a declined refund is 402.
    func cancelSubscription(_ input: Operations.CancelSubscription.Input) async throws
        -> Operations.CancelSubscription.Output
    {
        let id = try parseID(input.path.subscriptionId, "subscription_id")
        let body: Components.Schemas.SubscriptionCancelRequest = try json(input.body)
        let cancel = CancelSubscription(
            subscriptionID: id, reason: body.reason,
            refund: try body.refund.map { try CancelSubscription.Refund(known: $0.rawValue) } ?? .none,
            payments: payments)
        let canceled = try await changeOrDecline(cancel, on: id, body: body, success: 200) {
            Components.Schemas.SubscriptionDetail(
                subscription: try $0.subscription.api(), invoices: [], refund: try $0.refund?.api)
        } declined: {
            $0.refund?.status == .failed ? $0.refund?.failureCode ?? "refund_declined" : nil
        }
        let invoices = try await read(GetSubscription(id: id)).1
        var detail = canceled
        detail.invoices = try invoices.map { try $0.api }
        return .ok(.init(body: .json(detail)))
    }

    func scheduleSubscriptionCancel(_ input: Operations.ScheduleSubscriptionCancel.Input) async throws
        -> Operations.ScheduleSubscriptionCancel.Output
    {
        .ok(.init(body: .json(try await cancelAtPeriodEnd(true, input.path.subscriptionId))))
    }

    func resumeSubscription(_ input: Operations.ResumeSubscription.Input) async throws
        -> Operations.ResumeSubscription.Output
    {
        .ok(.init(body: .json(try await cancelAtPeriodEnd(false, input.path.subscriptionId))))
    }

    /// The app's cancellation at period end (`canceling`) or its resumption (`CancelAtPeriodEnd`).
    private func cancelAtPeriodEnd(_ canceling: Bool, _ subscriptionID: String) async throws
        -> Components.Schemas.Subscription
    {
        let id = try parseID(subscriptionID, "subscription_id")
        return try await change(
            CancelAtPeriodEnd(subscriptionID: id, canceling: canceling), on: id, body: nil as String?
        ) {
            try $0.api()
        }
    }

    func updateSubscriptionPaymentMethod(_ input: Operations.UpdateSubscriptionPaymentMethod.Input) async throws
        -> Operations.UpdateSubscriptionPaymentMethod.Output
    {
        let id = try parseID(input.path.subscriptionId, "subscription_id")
        let body: Components.Schemas.PaymentMethodRequest = try json(input.body)
        let stored = try await changeStaged(
            UpdatePaymentMethod(subscriptionID: id, paymentMethod: body.paymentMethod, payments: payments), on: id,
            body: body
        ) { StoredResponse(status: 200, body: try $0.api()) }
        return .ok(.init(body: .json(stored.body)))
    }

    /// The app's change of plan (`ChangePlan`); a declined charge is 402 with the provider's code.
    func changeSubscriptionPlan(_ input: Operations.ChangeSubscriptionPlan.Input) async throws
        -> Operations.ChangeSubscriptionPlan.Output
    {
        let id = try parseID(input.path.subscriptionId, "subscription_id")
        let body: Components.Schemas.PlanChangeRequest = try json(input.body)
        let changed = try await changeOrDecline(
            ChangePlan(subscriptionID: id, planID: body.plan, payments: payments), on: id, body: body, success: 200
        ) {
            try $0.record.api(declined: $0.declined)
        } declined: {
            $0.declinedCode
        }
        return .ok(.init(body: .json(changed)))
    }

    /// A manager's refund of an invoice (`RefundInvoice`); declined by the provider is 402 with its code.
    func refundInvoice(_ input: Operations.RefundInvoice.Input) async throws -> Operations.RefundInvoice.Output {
        let id = try parseID(input.path.invoiceId, "invoice_id")
        let body: Components.Schemas.InvoiceRefundRequest = try json(input.body)
        let refunded = try await changeOrDecline(
            RefundInvoice(invoiceID: id, amountCents: body.amountCents, reason: body.reason, payments: payments),
            on: id, body: body, success: 201
        ) {
            try $0.api
        } declined: {
            $0.status == .failed ? $0.failureCode ?? "refund_declined" : nil
        }
        return .created(.init(body: .json(refunded)))
    }
}

extension InvoiceRecord {
    var api: Components.Schemas.Invoice {
        get throws {
            .init(
                id: id.text, periodStart: periodStart, periodEnd: periodEnd, amountCents: amountCents,
                status: try .init(known: status), attempts: attempts, nextAttemptAt: nextAttemptAt,
                failureCode: failureCode, refundedCents: refundedCents, paidAt: paidAt, createdAt: createdAt,
                refunds: try refunds.map { try $0.api },
                dispute: try dispute.map {
                    .init(
                        status: try .init(known: $0.status), amountCents: $0.cents, reason: $0.reason,
                        openedAt: $0.openedAt)
                })
        }
    }
}

extension InvoiceRefund {
    var api: Components.Schemas.InvoiceRefund {
        get throws {
            .init(
                id: id.text, invoiceId: invoiceID.text, amountCents: amountCents, reason: reason,
                status: try .init(known: status.rawValue), failureCode: failureCode, createdAt: createdAt,
                decidedAt: decidedAt)
        }
    }
}
