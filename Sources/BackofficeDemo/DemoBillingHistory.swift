import Backoffice
import BackofficePlatform
import Foundation
import PostgresNIO

extension DemoEnvironment {
    /// Six weeks of the subscription business before today, so the manager's home and the billing
    /// section have something to show, through the real operations on a clock of their own: twelve
    /// customers subscribe (two to the annual plan) and pay when their trial ends; one is canceled by
    /// a manager with a prorated refund; three change to a card that is then declined at renewal
    /// (past due), and one of them changes back and is recovered at once. The two left past due keep
    /// access until their last retry, some days from now (the renewal service of `serve` tries them).
    /// Added once (when no subscriber's email is there), also to a demo database made before.
    static func seedBillingHistoryOnce(database: Database, policies: PolicySet) async throws {
        let known = try await survey(database) {
            try await $0.count("SELECT count(*) FROM customers WHERE email LIKE 'subscriber.%@example.com'")
        }
        guard known == 0 else { return }
        let context = OperationContext.system("demo-billing", policies: policies)
        let start = database.clock.now().addingTimeInterval(-41 * 86_400)
        func at(_ days: Double) -> Database {
            Database(
                client: database.client, logger: database.logger,
                clock: ManualWallClock(start.addingTimeInterval(days * 86_400)), ids: database.ids)
        }
        let payments = SimulatedPaymentGateway()
        var subscriptions: [UUID] = []
        for index in 0..<12 {
            let (customer, _) = try await at(Double(index) / 24).runAsSystem(
                SyncCustomer(
                    id: database.ids.next(), email: "subscriber.\(index + 1)@example.com",
                    displayName: "Subscriber \(index + 1)"), context: context)
            let subscribed = try await at(Double(index) / 24 + 0.01).runStagedAsSystem(
                Subscribe(
                    customerID: customer.id, planID: index >= 10 ? "annual" : "monthly",
                    paymentMethod: SimulatedPaymentGateway.approvedMethod, payments: payments), context: context)
            subscriptions.append(subscribed.record.id)
        }
        let renewals = RenewSubscriptions(payments: payments)
        _ = try await renewals.run(at(8), context: context, system: true)
        _ = try await at(20).runStagedAsSystem(
            CancelSubscription(
                subscriptionID: subscriptions[0], reason: "Moved abroad; asked by phone", refund: .prorated,
                payments: payments), context: context)
        for index in 1...3 {
            _ = try await at(30).runStagedAsSystem(
                UpdatePaymentMethod(
                    subscriptionID: subscriptions[index], paymentMethod: SimulatedPaymentGateway.declinedMethod,
                    payments: payments), context: context)
        }
        _ = try await renewals.run(at(39), context: context, system: true)
        _ = try await at(40).runStagedAsSystem(
            UpdatePaymentMethod(
                subscriptionID: subscriptions[3], paymentMethod: SimulatedPaymentGateway.approvedMethod,
                payments: payments), context: context)
    }
}
