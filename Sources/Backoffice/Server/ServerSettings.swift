import BackofficeConsole
import BackofficePlatform
import Crypto
import Foundation

/// How the service runs: where it listens, which database and policies it uses.
package struct ServerSettings: Sendable {
    package var host: String
    package var port: Int
    package var databaseURL: DatabaseURL
    package var policiesDirectory: URL
    /// Largest accepted request body, in bytes.
    package var maxBodySize: Int = 1 << 20
    /// Largest accepted body of a bulk upload (`bulkPaths`: a batch of 5,000 activity events).
    package var maxBulkBodySize: Int = 32 << 20
    /// The API's bulk uploads (a token's).
    package var bulkPaths: Set<String> = ["/v1/activity", "/v1/goods/import", "/v1/foods/import"]
    /// The console's bulk uploads (a signed-in session's, only from a role that may import goods).
    package var sessionBulkPaths: Set<String> = ["/console/goods/import"]
    /// How often timed locks are checked for expiry.
    package var lockExpiryInterval: Duration = .seconds(5)
    /// How often unsettled payments are reconciled (nil: never, e.g. when a cron job does it),
    /// and how old a payment must be to be looked at.
    package var reconcileInterval: Duration? = .seconds(300)
    package var reconcileOlderThanMinutes = 10
    /// How often subscriptions due are renewed and declined renewals retried (nil: never, e.g.
    /// when a cron job runs `billing run-renewals`).
    package var renewalInterval: Duration? = .seconds(60)
    /// How often the invoices are reconciled with the provider's payments (nil: never, e.g. when a
    /// cron job runs `billing reconcile`).
    package var billingReconcileInterval: Duration? = .seconds(86_400)
    /// How often the day's mails (shops' summaries, appeals waiting) are looked at; each day's go once.
    package var dailyMailInterval: Duration? = .seconds(600)
    /// The connection pool's size and how long the service waits for PostgreSQL.
    package var pool = PoolLimits()
    /// A port of its own for `/metrics` (`serve --metrics-port`), on `host`; nil serves it on
    /// `port` beside the API.
    package var metricsPort: Int?
    /// Proxies whose `X-Forwarded-For` is believed (`serve --trusted-proxy`); none by default.
    package var trustedProxies: [CIDR] = []
    /// Each payment provider's webhook secrets (several during a rotation): from configuration
    /// (`BACKOFFICE_WEBHOOK_SECRETS`), never from the repository.
    package var webhookSecrets: [String: [String]] = [:]
    /// A streaming replica for lag-tolerant reads (`serve --read-database-url`), and how far it may
    /// lag before reads go back to the primary.
    package var readDatabaseURL: DatabaseURL?
    package var replicaMaxLag: Duration = .seconds(5)
    /// Seals the console's TOTP secrets at rest (`BACKOFFICE_SECOND_FACTOR_KEY`): from
    /// configuration, never from the repository or the database. Without it no operator can set
    /// up or pass a second factor, so roles that need one cannot sign in to the console.
    package var secondFactorKey: SecondFactorKey?
    /// The service's public URL: the OAuth issuer (`iss`) of its access tokens, whose audience is
    /// `<url>/v1`. Default `http://<host>:<port>`.
    package var publicURL: String?

    /// The signer of OAuth access tokens: keys derived from `secondFactorKey` (a test server
    /// without one: a key of this process).
    package var accessTokens: AccessTokens {
        AccessTokens(
            issuer: publicURL ?? "http://\(host):\(port)",
            key: secondFactorKey?.derived(for: "oauth-access-tokens") ?? SymmetricKey(size: .bits256))
    }
    /// How the console's live pages update (a stream lasts at most the sessions' idle timeout).
    package var consoleLiveUpdates = LiveUpdates()
    /// How mail is sent (the outbox is delivered only with a transport).
    package var mail = MailSettings()
    /// The links in notification mails that turn one topic off, checked by the console.
    package var unsubscribeLinks: UnsubscribeLinks {
        UnsubscribeLinks(secondFactorKey: secondFactorKey, fallback: mail.linkKey)
    }
    /// What console sign-in passes before any password work; nil makes one from
    /// `secondFactorKey` with `SignInGate.defaultChecksAtOnce` (tests pass their own to watch it).
    package var signInGate: SignInGate?
    /// The payment provider (`SimulatedPaymentGateway` unless configured).
    package var payments: any PaymentGateway = SimulatedPaymentGateway()
    /// Where partners' webhook endpoints may point (`dev`: loopback too), and the resolver.
    package var outbound = OutboundSettings()
    /// How webhooks are delivered; nil delivers none (a test server, which posts by hand).
    package var webhooks: WebhookSettings? = nil

    /// Webhook secrets as configuration writes them: `provider=secret`, comma-separated, a
    /// provider repeated during a rotation (`simulated=whsec_new,simulated=whsec_old`).
    package static func webhookSecrets(_ text: String) throws -> [String: [String]] {
        var secrets: [String: [String]] = [:]
        for entry in text.split(separator: ",") {
            let pair = entry.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, !pair[0].isEmpty, pair[1].count >= 16 else {
                throw ConfigurationError(
                    description: "webhook secrets must be provider=secret (16 characters or more), comma-separated")
            }
            secrets[pair[0], default: []].append(pair[1])
        }
        return secrets
    }

    package init(host: String, port: Int, databaseURL: DatabaseURL, policiesDirectory: URL) {
        (self.host, self.port, self.databaseURL, self.policiesDirectory) = (host, port, databaseURL, policiesDirectory)
    }
}

/// How the console's live pages update: how often the server reads, how long one stream lasts,
/// and how many streams may be open per session and in all.
package struct LiveUpdates: Sendable {
    package var interval: Duration = .seconds(2)
    package var limit: Duration = .seconds(30 * 60)
    package var perSession = 3
    package var total = 200
    /// What the stream waits on between reads.
    package var timers: any Timers = EventLoopTimers()
    package init() {}
}
