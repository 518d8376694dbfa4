import BackofficePlatform
import Metrics

extension ServiceMetrics {
    /// Calls to the payment provider by operation and outcome (`ok`, `declined`, `failed`).
    static func paymentCall(_ operation: String, _ outcome: String) {
        series {
            Counter(
                label: "backoffice_payment_calls_total", dimensions: [("operation", operation), ("outcome", outcome)])
        }.increment()
    }

    /// The payment provider's circuit: 0 closed, 1 half-open, 2 open.
    static let paymentCircuit = series { Gauge(label: "backoffice_payment_circuit_state") }

    /// Payment webhooks refused for their signature (wrong, stale, missing, too many).
    static let webhookSignatureFailures = series { Counter(label: "backoffice_webhook_signature_failures_total") }
}
