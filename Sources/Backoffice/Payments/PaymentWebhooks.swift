import BackofficePlatform
import Crypto
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// The signature of a provider's webhook: `Webhook-Signature: t=<unix seconds>,v1=<hex>`, where
/// each `v1` is HMAC-SHA256 of `"{t}.{raw body}"` under one of the provider's webhook secrets
/// (several during a rotation). Compared in constant time; a timestamp more than `tolerance`
/// away from now is refused (a replayed delivery).
package enum WebhookSignature {
    package static let tolerance: TimeInterval = 300
    /// The most signatures a header may carry (one per secret during a rotation), and its
    /// longest length: a header past either is refused before any HMAC is computed.
    package static let maxSignatures = 5
    package static let maxHeaderLength = 500

    /// Whether `header` signs `body` under one of `secrets`, at a time within the tolerance of `now`.
    package static func verify(header: String?, body: [UInt8], secrets: [String], now: Date) -> Bool {
        guard let header, header.utf8.count <= maxHeaderLength else { return false }
        var timestamp: Int64?
        var signatures: [[UInt8]] = []
        for part in header.split(separator: ",", omittingEmptySubsequences: true) {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2 else { continue }
            switch pair[0] {
            case "t": timestamp = Int64(pair[1])
            case "v1": if let bytes = hexBytes(pair[1]) { signatures.append(bytes) }
            default: continue
            }
        }
        guard let timestamp, abs(now.timeIntervalSince1970 - Double(timestamp)) <= tolerance,
            (1...maxSignatures).contains(signatures.count)
        else { return false }
        let signed = Array("\(timestamp).".utf8) + body
        return secrets.contains { secret in
            let key = SymmetricKey(data: Data(secret.utf8))
            return signatures.contains {
                HMAC<SHA256>.isValidAuthenticationCode($0, authenticating: signed, using: key)
            }
        }
    }

    /// The header a provider sends for `body` at `time` under `secrets` (one `v1` each).
    package static func header(body: [UInt8], secrets: [String], at time: Date) -> String {
        let timestamp = Int64(time.timeIntervalSince1970)
        let signed = Array("\(timestamp).".utf8) + body
        let codes = secrets.map { secret in
            hex(Array(HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: Data(secret.utf8)))))
        }
        return (["t=\(timestamp)"] + codes.map { "v1=\($0)" }).joined(separator: ",")
    }

    /// A new webhook secret: `whsec_` and 32 random bytes, base64url.
    package static func generateSecret() -> String {
        "whsec_" + TokenSecret.generate().value.dropFirst(3)
    }

    /// A `v1` signature: 64 hex digits.
    private static func hexBytes(_ text: String) -> [UInt8]? {
        text.utf8.count == 64 ? bytes(hex: text) : nil
    }
}

/// A provider's event, as the webhook carries it.
package struct PaymentEvent: Sendable {
    package var id: String
    package var type: String
    package var paymentID: String
    package var failureCode: String?
    /// For a refund: what this refund returned, in cents (nil: all that was left); for a dispute,
    /// the amount disputed.
    package var amountCents: Int64?
    /// For a dispute: the card network's reason, and how it closed (`won`, `lost`).
    package var reason: String? = nil
    package var status: String? = nil

    package init(
        id: String, type: String, paymentID: String, failureCode: String?, amountCents: Int64? = nil,
        reason: String? = nil, status: String? = nil
    ) {
        (self.id, self.type, self.paymentID, self.failureCode, self.amountCents) = (
            id, type, paymentID, failureCode, amountCents
        )
        (self.reason, self.status) = (reason, status)
    }
}

/// What a webhook delivery did.
package struct WebhookReceipt: Sendable, Equatable {
    package var duplicate: Bool
    /// completed, payment_failed, refunded, partially_refunded, already_applied, unknown_payment or ignored_type.
    package var outcome: String
}

/// The provider delivers an event (`payments.webhook`, public): verified by its signature (400
/// `invalid_signature` and nothing changed otherwise), applied once per event id (a repeat
/// answers `duplicate`), and at most once per payment whatever path got there first — the
/// synchronous answer at checkout, this webhook, or reconciliation: a payment completes only
/// from `pending`, under its row lock.
package struct ReceivePaymentWebhook: AuditedOperation {
    package static let action: Action = "payments.webhook"
    let provider: String
    let body: [UInt8]
    let signature: String?
    let secrets: [String]
    let event: PaymentEvent
    let payments: any PaymentGateway

    package init(
        provider: String, body: [UInt8], signature: String?, secrets: [String], event: PaymentEvent,
        payments: any PaymentGateway
    ) {
        (self.provider, self.body, self.signature, self.secrets, self.event, self.payments) = (
            provider, body, signature, secrets, event, payments
        )
    }

    /// The checks that need no database, made before one is leased (the edge holds no
    /// transaction for webhooks): the provider is configured, and the signature verifies at `now`.
    /// - Throws: `notFound` for an unknown provider, `invalidSignature`.
    package func verify(at now: Date) throws {
        guard !secrets.isEmpty, provider == payments.provider else {
            throw DomainError.notFound("Webhook endpoint for provider '\(provider)'")
        }
        guard WebhookSignature.verify(header: signature, body: body, secrets: secrets, now: now) else {
            throw PaymentRefusal.invalidSignature
        }
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<WebhookReceipt> {
        try verify(at: unit.now)
        let fresh = try await unit.first(
            """
            INSERT INTO payment_webhook_events (provider, event_id, type, provider_payment_id, outcome, received_at)
            VALUES (\(provider), \(event.id), \(event.type), \(event.paymentID), 'received', \(unit.now))
            ON CONFLICT DO NOTHING RETURNING 1
            """
        ) { _ in true }
        guard fresh == true else { return .unchanged(WebhookReceipt(duplicate: true, outcome: "duplicate")) }
        let applied: (outcome: String, tenant: UUID, order: UUID?, invoice: UUID?)
        if event.type.hasPrefix("dispute.") {
            let (outcome, invoice) = try await InvoiceDispute.apply(event, provider: provider, in: unit)
            applied = (outcome, platformTenantID, nil, invoice)
        } else {
            let (outcome, tenant, order) = try await apply(in: unit)
            applied = (outcome, tenant, order, nil)
        }
        let (outcome, tenant, order, invoice) = applied
        try await unit.execute(
            """
            UPDATE payment_webhook_events SET outcome = \(outcome) WHERE provider = \(provider) AND event_id = \
            \(event.id)
            """
        )
        struct Snapshot: Encodable { let event_id: String, type: String, payment_id: String, outcome: String }
        let event = AuditRecord(
            action: Self.action, tenantID: tenant,
            targetType: order != nil ? "order" : invoice != nil ? "invoice" : "payment_event",
            targetID: order?.text ?? invoice?.text ?? self.event.id,
            reason: nil, before: nil,
            after: try AuditRecord.json(
                Snapshot(
                    event_id: self.event.id, type: self.event.type, payment_id: self.event.paymentID, outcome: outcome))
        )
        return Audited(WebhookReceipt(duplicate: false, outcome: outcome), event: event)
    }

    /// Applies the event to its payment and order: the outcome, and the tenant and order concerned.
    private func apply(in unit: UnitOfWork) async throws -> (String, UUID, UUID?) {
        guard ["payment.succeeded", "payment.failed", "refund.succeeded"].contains(event.type) else {
            return ("ignored_type", platformTenantID, nil)
        }
        guard
            let payment = try await unit.first(
                """
                SELECT \(unescaped: Payment.columns) FROM payments WHERE provider = \(provider) AND \
                provider_payment_id = \(event.paymentID) FOR UPDATE
                """,
                as: Payment.self)
        else { return ("unknown_payment", platformTenantID, nil) }
        let order = try await Order.fetch(payment.orderID, forUpdate: true, in: unit)
        let outcome: String
        switch event.type {
        case "payment.succeeded":
            outcome =
                try await PaymentCompletion.succeeded(payment, order, in: unit) != nil ? "completed" : "already_applied"
        case "payment.failed":
            outcome =
                try await PaymentCompletion.failed(
                    payment, order, code: event.failureCode ?? "payment_failed", in: unit) != nil
                ? "payment_failed" : "already_applied"
        default:
            outcome = try await refunded(payment, order, in: unit)
        }
        return (outcome, order.tenantID, order.id)
    }
}

extension ReceivePaymentWebhook {
    /// A refund made at the provider: `event.amountCents` (all that is left when absent), never
    /// more than what is left of the capture. A partial refund is recorded on the payment
    /// (`partially_refunded`) and leaves the order as it is; the refund of what is left makes
    /// the order refunded and gives its FitPoints back (`refunded`). FitPoints are never returned
    /// in part: a dollar refund says nothing about the lines paid in points.
    fileprivate func refunded(_ payment: Payment, _ order: Order, in unit: UnitOfWork) async throws -> String {
        let left = payment.capturedCents - payment.refundedCents
        guard payment.status == .captured, left > 0, OrderTransition.sources(of: .refunded).contains(order.status)
        else { return "already_applied" }
        let amount = min(left, max(0, event.amountCents ?? left))
        guard amount > 0 else { return "already_applied" }
        guard amount == left else {
            try await Payment.record(
                payment.id, status: .captured, refundedCents: payment.refundedCents + amount, in: unit)
            return "partially_refunded"
        }
        try await Payment.record(payment.id, status: .refunded, refundedCents: payment.capturedCents, in: unit)
        let after = try await OrderStatus.move(
            order, to: .refunded, reason: "refunded at the payment provider", shipment: nil, in: unit)
        try await OrderStatus.returnFitPoints(of: after, reason: "order refunded at the payment provider", in: unit)
        return "refunded"
    }
}

/// Webhook deliveries refused for their signature: each counted
/// (`backoffice_webhook_signature_failures_total`), and logged at most once a minute per source
/// address (a flood of forgeries writes one line a minute, not one per request). In memory, per
/// process, forgetting addresses quiet for a minute.
final class WebhookRefusals: Sendable {
    private let lastLogged = Mutex<[String: ContinuousClock.Instant]>([:])
    private let now: @Sendable () -> ContinuousClock.Instant

    init(now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) { self.now = now }

    /// Counts a refusal from `address` and logs it unless that address was logged in the last minute.
    func refused(from address: String, provider: String, logger: Logger) {
        ServiceMetrics.webhookSignatureFailures.increment()
        let log = lastLogged.withLock { seen in
            let current = now()
            if let last = seen[address], current - last < .seconds(60) { return false }
            if seen.count > 10_000 { seen = seen.filter { current - $0.value < .seconds(60) } }
            seen[address] = current
            return true
        }
        if log {
            logger.warning(
                """
                payment webhook refused: invalid signature (further ones from this address this minute are \
                counted, not logged)
                """,
                metadata: ["source_ip": .string(address), "provider": .string(provider)])
        }
    }
}
