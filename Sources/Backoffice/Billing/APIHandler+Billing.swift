import BackofficeAPI
import BackofficePlatform
import Foundation

extension APIHandler {
    /// The app subscribes a customer: `Subscribe`, staged (the provider charges outside any
    /// transaction); a declined first charge is 402 with the provider's code.
    func subscribe(_ input: Operations.Subscribe.Input) async throws -> Operations.Subscribe.Output {
        let customerID = try parseID(input.path.customerId, "customer_id")
        let body: Components.Schemas.SubscribeRequest = try json(input.body)
        let subscribe = Subscribe(
            customerID: customerID, planID: body.plan, paymentMethod: body.paymentMethod, payments: payments)
        let subscription = try await changeOrDecline(subscribe, on: customerID, body: body, success: 201) {
            try $0.record.api(declined: $0.declined)
        } declined: {
            $0.declinedCode
        }
        return .created(.init(body: .json(subscription)))
    }

    /// `changeStaged` for a change the payment provider may refuse: `respond` makes the answer and
    /// `declined` reads the provider's code from it when it refused. A refusal is stored as 402 (a
    /// replay is refused alike) and thrown as 402 with that code; otherwise the answer is stored with
    /// `success` and returned.
    func changeOrDecline<Operation: StagedOperation, Reply: Codable & Sendable>(
        _ operation: Operation, on id: UUID, body: some Encodable & Sendable, success: Int,
        respond: @escaping @Sendable (Operation.Output) throws -> Reply,
        declined: @escaping @Sendable (Reply) -> String?
    ) async throws -> Reply {
        let stored = try await changeStaged(operation, on: id, body: body) { output in
            let reply = try respond(output)
            return StoredResponse(status: declined(reply) == nil ? success : 402, body: reply)
        }
        if stored.status == 402 { throw PaymentRefusal.declined(code: declined(stored.body) ?? "declined") }
        return stored.body
    }
}

extension SubscriptionRecord {
    /// As the contract writes it; `declined`, the provider's reason when its first charge was refused.
    func api(declined: String? = nil) throws -> Components.Schemas.Subscription {
        .init(
            id: id.text, customerId: customerID.text, plan: plan, priceCents: priceCents,
            interval: try .init(known: interval.rawValue), status: try .init(known: status.rawValue),
            currentPeriodStart: currentPeriod?.lowerBound, currentPeriodEnd: currentPeriod?.upperBound,
            trialEndsAt: trialEndsAt, graceEndsAt: graceEndsAt, creditCents: creditCents,
            cancelAtPeriodEnd: cancelAtPeriodEnd,
            declinedCode: declined, version: version)
    }
}

extension APIHandler {
    /// The app's read of a customer's entitlement; an unchanged one is 304.
    func getEntitlements(_ input: Operations.GetEntitlements.Input) async throws -> Operations.GetEntitlements.Output {
        let customerID = try parseID(input.path.customerId, "customer_id")
        let entitlement = try await read(GetEntitlement(customerID: customerID))
        let etag = entitlement.etag
        if EntityTag.matches(input.headers.ifNoneMatch, etag) { return .notModified(.init(headers: .init(eTag: etag))) }
        return .ok(.init(headers: .init(eTag: etag), body: .json(try entitlement.api)))
    }

    /// A renewal run now (`RenewSubscriptions`), or with `dry_run` what is due.
    func runRenewals(_ input: Operations.RunRenewals.Input) async throws -> Operations.RunRenewals.Output {
        let body: Components.Schemas.RenewalRunRequest = try json(input.body)
        let dryRun = body.dryRun ?? false
        let report =
            try await dryRun
            ? database.read(DueRenewals(), context: try context())
            : RenewSubscriptions(payments: payments).run(database, context: try context())
        return .ok(
            .init(
                body: .json(
                    .init(
                        dryRun: dryRun, invoiced: report.invoiced, ended: report.ended, charged: report.charged,
                        paid: report.paid, retrying: report.retrying, lapsed: report.lapsed,
                        unknown: report.unknown))))
    }
}

extension APIHandler {
    /// The invoices reconciled with the provider's payments now (`ReconcileInvoices`).
    func reconcileBilling(_ input: Operations.ReconcileBilling.Input) async throws
        -> Operations.ReconcileBilling.Output
    {
        let body: Components.Schemas.BillingReconcileRequest = try json(input.body)
        let report = try await ReconcileInvoices(days: body.days, payments: payments).run(
            database, context: try context())
        return .ok(.init(body: .json(try report.api)))
    }
}

extension BillingReconcileReport {
    var api: Components.Schemas.BillingReconcileReport {
        get throws {
            .init(
                since: since, invoices: invoices, providerCharges: providerCharges, settled: settled,
                differences: try differences.map { try $0.api })
        }
    }
}

extension BillingDifference {
    var api: Components.Schemas.BillingDifference {
        get throws {
            .init(
                kind: try .init(known: kind.rawValue), invoiceId: invoiceID?.text, providerPaymentId: providerPaymentID,
                invoiceCents: invoiceCents, providerCents: providerCents, settled: settled)
        }
    }
}

extension Entitlement {
    var api: Components.Schemas.Entitlement {
        get throws {
            .init(
                customerId: customerID.text, premium: premium, until: until, reason: try .init(known: reason.rawValue),
                subscriptionId: subscriptionID?.text, plan: plan)
        }
    }
}
