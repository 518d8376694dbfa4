import BackofficeAPI
import BackofficePlatform
import Foundation

extension APIHandler {
    func receivePaymentWebhook(_ input: Operations.ReceivePaymentWebhook.Input) async throws
        -> Operations.ReceivePaymentWebhook.Output
    {
        let body: Components.Schemas.PaymentWebhookEvent = try json(input.body)
        let event = PaymentEvent(
            id: body.id, type: body._type, paymentID: body.data.paymentId, failureCode: body.data.failureCode,
            amountCents: body.data.amountCents, reason: body.data.reason, status: body.data.status?.rawValue)
        let scope = try scope()
        let webhook = ReceivePaymentWebhook(
            provider: input.path.provider, body: scope.rawBody ?? [],
            signature: input.headers.webhookSignature,
            secrets: webhookSecrets[input.path.provider] ?? [], event: event, payments: payments)
        do { try webhook.verify(at: now) } catch PaymentRefusal.invalidSignature {
            webhookRefusals.refused(
                from: scope.sourceIP ?? "unknown", provider: input.path.provider,
                logger: database.logger)
            throw PaymentRefusal.invalidSignature
        }
        let receipt = try await publicChange(webhook)
        return .ok(.init(body: .json(.init(received: true, duplicate: receipt.duplicate, outcome: receipt.outcome))))
    }

    func reconcilePayments(_ input: Operations.ReconcilePayments.Input) async throws
        -> Operations.ReconcilePayments.Output
    {
        let body: Components.Schemas.ReconcileRequest = try json(input.body)
        let report = try await ReconcilePayments(olderThanMinutes: body.olderThanMinutes, payments: payments).run(
            database, context: try context())
        return .ok(
            .init(
                body: .json(
                    Components.Schemas.ReconcileReport(
                        checked: report.checked, completed: report.completed.map(\.text),
                        cancelled: report.cancelled.map(\.text),
                        finishedMoves: report.finishedMoves.map(\.text), stillPending: report.stillPending))))
    }
}
