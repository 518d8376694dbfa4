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
