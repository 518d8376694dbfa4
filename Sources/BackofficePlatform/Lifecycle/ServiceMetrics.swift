import Metrics
import Prometheus

/// The service's own series on `/metrics` besides the HTTP ones (`MetricsMiddleware`): the platform's here, each
/// domain's in an extension of its own. Each series exists from its first use; every one is created after
/// swift-metrics is bootstrapped with the process's Prometheus registry.
package enum ServiceMetrics {
    /// Pooled connections held by requests and services right now.
    package static let poolInUse = series { Meter(label: "backoffice_pool_connections_in_use") }
    /// Requests waiting for a pooled connection right now.
    package static let poolWaiting = series { Meter(label: "backoffice_pool_waiting") }
    /// Waits for a pooled connection that ended at the lease timeout (answered 503).
    package static let leaseTimeouts = series { Counter(label: "backoffice_pool_lease_timeouts_total") }
    /// Statements PostgreSQL cancelled at the statement timeout (answered 503).
    package static let statementTimeouts = series { Counter(label: "backoffice_statement_timeouts_total") }
    /// Audit events appended (in their change's transaction; one rolled back later is counted too).
    package static let auditAppends = series { Counter(label: "backoffice_audit_appends_total") }
    /// Refused tokens (missing, malformed, unknown, revoked or expired).
    package static let authenticationFailures = series { Counter(label: "backoffice_authentication_failures_total") }
    /// Requests refused because their address is over a limit (429).
    package static let rateLimited = series { Counter(label: "backoffice_authentication_rate_limited_total") }
    /// Changes answered from an Idempotency-Key record instead of being made again.
    package static let idempotentReplays = series { Counter(label: "backoffice_idempotent_replays_total") }
    /// Mail the outbox delivered, and attempts that failed (each retried, or set aside on a 5xx).
    package static let mailSent = series { Counter(label: "backoffice_mail_sent_total") }
    package static let mailFailed = series { Counter(label: "backoffice_mail_failures_total") }
    /// Counts an answer of the edge by status class (`1xx` … `5xx`): every answer, refusals the
    /// HTTP series never see included (401, 429, and 503 before the router).
    package static func answered(_ status: Int) { answers[min(max(status / 100, 1), 5) - 1].increment() }
    private static let answers = series {
        (1...5).map { Counter(label: "backoffice_http_responses_total", dimensions: [("class", "\($0)xx")]) }
    }

    /// The read replica: 1 when its last check succeeded (reads may go to it), 0 when they go to the primary.
    package static let replicaUp = series { Gauge(label: "backoffice_replica_up") }
    /// How far the read replica's replay is behind the primary's log, in bytes.
    package static let replicaLagBytes = series { Gauge(label: "backoffice_replica_lag_bytes") }
    /// How long ago the replica replayed its last transaction while the primary is ahead of it (0 when caught up).
    package static let replicaLagSeconds = series { Gauge(label: "backoffice_replica_lag_seconds") }
    /// Lag-tolerant reads the replica answered.
    package static let replicaReads = series { Counter(label: "backoffice_replica_reads_total") }

    /// Lag-tolerant reads that went to the primary instead, by reason: `down` (its last check
    /// failed), `lagging` (behind by the maximum lag or more), `read_your_writes` (it has not yet
    /// replayed the client's own change), `failed` (it failed the read itself).
    package static func replicaFallback(_ reason: String) {
        series { Counter(label: "backoffice_replica_fallbacks_total", dimensions: [("reason", reason)]) }.increment()
    }

    /// The process's Prometheus registry, bootstrapped into swift-metrics once (before the first series exists).
    package static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return registry
    }()

    /// A series of the service's: a domain declares its own in an extension of its own with this
    /// (`static let … = series { Counter(label: …) }`), so every series is made after the bootstrap.
    package static func series<Series>(_ make: () -> Series) -> Series {
        _ = registry  // bootstraps swift-metrics before the first series exists
        return make()
    }
}
