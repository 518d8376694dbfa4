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
        let stored = try await changeStaged(subscribe, on: customerID, body: body) { subscribed in
            StoredResponse(
                status: subscribed.declined == nil ? 201 : 402,
                body: try subscribed.record.api(declined: subscribed.declined))
        }
        guard stored.status == 201 else {
            throw PaymentRefusal.declined(code: stored.body.declinedCode ?? "payment_declined")
        }
        return .created(.init(body: .json(stored.body)))
    }
}

extension SubscriptionRecord {
    /// As the contract writes it; `declined`, the provider's reason when its first charge was refused.
    func api(declined: String? = nil) throws -> Components.Schemas.Subscription {
        .init(
            id: id.text, customerId: customerID.text, plan: plan, priceCents: priceCents,
            interval: try .init(known: interval.rawValue), status: try .init(known: status.rawValue),
            currentPeriodStart: currentPeriod?.lowerBound, currentPeriodEnd: currentPeriod?.upperBound,
            trialEndsAt: trialEndsAt, cancelAtPeriodEnd: cancelAtPeriodEnd, declinedCode: declined, version: version)
    }
}

extension APIHandler {
    /// The app's read of a customer's entitlement; an unchanged one is 304.
    func getEntitlements(_ input: Operations.GetEntitlements.Input) async throws -> Operations.GetEntitlements.Output {
        let customerID = try parseID(input.path.customerId, "customer_id")
        let entitlement = try await database.read(GetEntitlement(customerID: customerID), context: try context())
        let etag = entitlement.etag
        if EntityTag.matches(input.headers.ifNoneMatch, etag) { return .notModified(.init(headers: .init(eTag: etag))) }
        return .ok(
            .init(
                headers: .init(eTag: etag),
                body: .json(
                    .init(
                        customerId: entitlement.customerID.text, premium: entitlement.premium,
                        until: entitlement.until, reason: try .init(known: entitlement.reason.rawValue),
                        subscriptionId: entitlement.subscriptionID?.text, plan: entitlement.plan))))
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
