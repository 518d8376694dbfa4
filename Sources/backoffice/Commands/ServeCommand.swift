import ArgumentParser
import Backoffice
import BackofficeConsole
import BackofficePlatform
import Foundation
import Logging
import PostgresNIO

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the service against BACKOFFICE_DATABASE_URL (production; no demo data).",
        discussion: """
            The URL's role must not own the tables (row-level security applies to it): use the \
            backoffice_app role the migrations create. SIGTERM drains requests, then stops.
            Payments (required): BACKOFFICE_PAYMENTS=http, with BACKOFFICE_PAYMENTS_URL, \
            BACKOFFICE_PAYMENTS_API_KEY and BACKOFFICE_PAYMENTS_NAME (the provider's name in webhook URLs, \
            default stripe); BACKOFFICE_PAYMENTS_TIMEOUT_SECONDS (each attempt, default 5) and \
            BACKOFFICE_PAYMENTS_COOLDOWN_SECONDS (how long an open circuit refuses calls, default 30); or \
            BACKOFFICE_PAYMENTS=simulated (every payment succeeds: tests and demos only). Without it serve \
            refuses to start. Payment webhooks are accepted for the providers named in \
            BACKOFFICE_WEBHOOK_SECRETS (provider=secret, comma-separated; a provider twice while a \
            secret is rotated).
            Console second factor (required): BACKOFFICE_SECOND_FACTOR_KEY, 32 random bytes in base64 \
            (`openssl rand -base64 32`), seals operators' TOTP secrets at rest; keep it with the other \
            secrets (a lost key means every operator sets up the second factor again).
            Mail (required): BACKOFFICE_SMTP_URL, smtp://USER:PASSWORD@HOST:PORT (STARTTLS before AUTH) or smtps://… \
            (TLS), with ?from=ADDRESS and ?ca=PEM-FILE; and BACKOFFICE_PUBLIC_URL, the console's public address \
            (https://…), the origin of the links mail carries. Invitations, lockout notices and shop decisions go \
            through a transactional outbox, sent at least once under a stable Message-ID. BACKOFFICE_MAIL=log sends \
            nothing and logs each message's recipient and subject instead (a service without mail on purpose); without \
            either serve refuses to start.
            Read replica: --read-database-url (env BACKOFFICE_READ_DATABASE_URL) names a streaming \
            replica of the database (the same role); lag-tolerant reads (lists, exports, the catalog, \
            leaderboards, the audit list) go to it while it answers and lags less than --replica-max-lag, \
            except a client's reads right after its own change; otherwise, and when it fails a read, the \
            primary answers.
            Logs: one line per request and event on standard error; LOG_LEVEL (default info), \
            LOG_FORMAT=json for one JSON object per line (text otherwise).
            Example: BACKOFFICE_DATABASE_URL=postgres://backoffice_app:secret@db:5432/backoffice \
            backoffice serve --host 0.0.0.0 --port 8080 --public-url https://backoffice.example.com
            """)
    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port to listen on (0: any free port).") var port = 8080
    @Option(help: "Serve /metrics on this port (same address) instead of beside the API.") var metricsPort: Int?
    @Option(help: "Database URL (env BACKOFFICE_DATABASE_URL).") var databaseURL: String?
    @Option(help: "A streaming replica's URL for lag-tolerant reads (env BACKOFFICE_READ_DATABASE_URL).")
    var readDatabaseURL: String?
    @Option(help: "Seconds the replica may lag before reads go to the primary.") var replicaMaxLag = 5.0
    @Option(help: "Seconds between checks for expired timed locks.") var lockExpirySeconds = 5
    @Option(help: "Seconds between reconciliations of unsettled payments (0: none; run `payments reconcile` instead).")
    var reconcileIntervalSeconds = 300
    @Option(help: "Reconcile payments unsettled at least this many minutes.") var reconcileOlderThanMinutes = 10
    @Option(help: "Seconds between subscription renewal runs (0: none; run `billing run-renewals` instead).")
    var renewalIntervalSeconds = 60
    @Option(help: "Seconds between reconciliations of the invoices (0: none; run `billing reconcile` instead).")
    var billingReconcileIntervalSeconds = 86_400
    @Option(
        help:
            """
            Database connections the pool may open (default: twice this host's cores plus one; size it to the \
            database host's cores).
            """
    )
    var maxConnections = PoolLimits.suggestedConnections
    @Option(help: "Seconds to wait for a pooled database connection before answering 503 (Retry-After).")
    var leaseTimeout = 5.0
    @Option(help: "Seconds to wait for a new database connection to open.") var connectTimeout = 2.0
    @Option(help: "Seconds a statement may run, lock waits included, before PostgreSQL cancels it (answered 503).")
    var statementTimeout = 30.0
    @Option(
        help: ArgumentHelp(
            """
            A proxy (address or CIDR) whose X-Forwarded-For names the client; repeatable. Without it the peer \
            address is recorded.
            """,
            valueName: "cidr"))
    var trustedProxy: [String] = []
    @Option(
        help: ArgumentHelp(
            """
            The service's public URL, the issuer of its OAuth access tokens (their audience is <url>/v1); \
            also BACKOFFICE_PUBLIC_URL. Default http://HOST:PORT on loopback; required on any other --host.
            """,
            valueName: "url"))
    var publicURL: String?
    @Flag(
        help: """
            Accept loopback addresses and http for partners' webhook endpoints (a relay on this host, or tests); \
            private, link-local and metadata addresses stay refused. Logged as a warning at start.
            """)
    var allowLoopbackWebhooks = false
    @OptionGroup var project: ProjectOptions

    /// Where partners' webhook endpoints may be: public addresses over https, or with
    /// `--allow-loopback-webhooks` loopback and http too (logged as a warning).
    private func outboundRules(_ logger: Logger) -> OutboundTarget.Rules {
        guard allowLoopbackWebhooks else { return .serve }
        logger.warning("webhook endpoints may be loopback addresses and http (--allow-loopback-webhooks)")
        return .dev
    }

    /// The pool's limits, the trusted proxies and the public URL, checked.
    private func applyNetwork(to settings: inout ServerSettings) throws {
        guard maxConnections >= 1, leaseTimeout > 0, connectTimeout > 0, statementTimeout > 0 else {
            throw CLIFailure.usage("--max-connections must be at least 1 and every timeout above 0 seconds")
        }
        settings.pool.maximumConnections = maxConnections
        settings.pool.leaseTimeout = .milliseconds(Int64(leaseTimeout * 1000))
        settings.pool.connectTimeout = .milliseconds(Int64(connectTimeout * 1000))
        settings.pool.statementTimeout = .milliseconds(Int64(statementTimeout * 1000))
        do { settings.trustedProxies = try trustedProxy.map(CIDR.init) } catch {
            throw CLIFailure.usage("--trusted-proxy: \(error)")
        }
        settings.publicURL = try MailConfiguration.publicURL(
            publicURL ?? ProcessInfo.processInfo.environment["BACKOFFICE_PUBLIC_URL"])
    }

    func run() async throws {
        try await runServerCommand {
            let logger = makeLogger()
            _ = try project.loadPolicies()
            var settings = ServerSettings(
                host: host, port: port,
                databaseURL: try resolveDatabaseURL(databaseURL, env: ["BACKOFFICE_DATABASE_URL"]),
                policiesDirectory: project.policiesDirectory)
            settings.lockExpiryInterval = .seconds(max(1, lockExpirySeconds))
            (settings.webhooks, settings.outbound.rules) = (WebhookSettings(), outboundRules(logger))
            guard reconcileIntervalSeconds >= 0, (0...10_080).contains(reconcileOlderThanMinutes) else {
                throw CLIFailure.usage(
                    "--reconcile-interval-seconds must be 0 or more, --reconcile-older-than-minutes 0 to 10,080")
            }
            settings.reconcileInterval = reconcileIntervalSeconds == 0 ? nil : .seconds(reconcileIntervalSeconds)
            settings.reconcileOlderThanMinutes = reconcileOlderThanMinutes
            guard renewalIntervalSeconds >= 0, billingReconcileIntervalSeconds >= 0 else {
                throw CLIFailure.usage(
                    "--renewal-interval-seconds and --billing-reconcile-interval-seconds must be 0 or more")
            }
            settings.renewalInterval = renewalIntervalSeconds == 0 ? nil : .seconds(renewalIntervalSeconds)
            settings.billingReconcileInterval =
                billingReconcileIntervalSeconds == 0 ? nil : .seconds(billingReconcileIntervalSeconds)
            settings.metricsPort = metricsPort
            try applyNetwork(to: &settings)
            if let replica = readDatabaseURL ?? ProcessInfo.processInfo.environment["BACKOFFICE_READ_DATABASE_URL"] {
                guard replicaMaxLag > 0 else { throw CLIFailure.usage("--replica-max-lag must be above 0 seconds") }
                settings.readDatabaseURL = try resolveDatabaseURL(replica, env: [])
                settings.replicaMaxLag = .milliseconds(Int64(replicaMaxLag * 1000))
            }
            settings.payments = try PaymentConfiguration.validator(ProcessInfo.processInfo.environment)
            guard let key = ProcessInfo.processInfo.environment["BACKOFFICE_SECOND_FACTOR_KEY"] else {
                throw CLIFailure.usage(
                    "serve needs BACKOFFICE_SECOND_FACTOR_KEY (32 random bytes in base64, "
                        + "e.g. from `openssl rand -base64 32`): "
                        + "it seals the console's TOTP secrets")
            }
            do { settings.secondFactorKey = try SecondFactorKey(base64: key) } catch {
                throw CLIFailure.usage("BACKOFFICE_SECOND_FACTOR_KEY: \(error)")
            }
            if let secrets = ProcessInfo.processInfo.environment["BACKOFFICE_WEBHOOK_SECRETS"] {
                do { settings.webhookSecrets = try ServerSettings.webhookSecrets(secrets) } catch {
                    throw CLIFailure.usage("BACKOFFICE_WEBHOOK_SECRETS: \(error)")
                }
            }
            settings.mail = try MailConfiguration.settings(ProcessInfo.processInfo.environment, logger: logger)
            if let url = settings.publicURL { settings.mail.publicURL = url }  // --public-url for mail's links too
            try MailConfiguration.requirePublicURL(settings.publicURL, servingOn: host)
            try await BackofficeServer.run(settings: settings, logger: logger) { port in
                say("listening on http://\(host):\(port)")
            }
        }
    }
}

/// The payment provider `serve` uses, from the environment.
enum PaymentConfiguration {
    /// The provider `BACKOFFICE_PAYMENTS` names. There is no default: a production service never
    /// takes payments from the simulated provider because a setting was forgotten.
    /// - Throws: `CLIFailure.usage` naming the setting when it is missing, unknown or incomplete.
    static func validator(_ environment: [String: String]) throws -> any PaymentGateway {
        guard let choice = environment["BACKOFFICE_PAYMENTS"], !choice.isEmpty else {
            throw CLIFailure.usage(
                "serve needs BACKOFFICE_PAYMENTS: http (a real provider, with BACKOFFICE_PAYMENTS_URL and "
                    + "BACKOFFICE_PAYMENTS_API_KEY) "
                    + "or simulated (every payment succeeds: tests and demos only)")
        }
        switch choice {
        case "simulated": return SimulatedPaymentGateway()
        case "http":
            guard let url = environment["BACKOFFICE_PAYMENTS_URL"], URL(string: url)?.scheme?.hasPrefix("http") == true
            else {
                throw CLIFailure.usage(
                    "BACKOFFICE_PAYMENTS=http needs BACKOFFICE_PAYMENTS_URL (the provider's base URL)")
            }
            guard let key = environment["BACKOFFICE_PAYMENTS_API_KEY"], !key.isEmpty else {
                throw CLIFailure.usage("BACKOFFICE_PAYMENTS=http needs BACKOFFICE_PAYMENTS_API_KEY")
            }
            var settings = HTTPPaymentGateway.Settings(
                provider: environment["BACKOFFICE_PAYMENTS_NAME"] ?? "stripe", baseURL: url, apiKey: key)
            if let seconds = try seconds("BACKOFFICE_PAYMENTS_TIMEOUT_SECONDS", environment) {
                settings.attemptTimeout = seconds
            }
            if let seconds = try seconds("BACKOFFICE_PAYMENTS_COOLDOWN_SECONDS", environment) {
                settings.cooldown = seconds
            }
            return HTTPPaymentGateway(settings: settings)
        case let other: throw CLIFailure.usage("BACKOFFICE_PAYMENTS must be simulated or http, not '\(other)'")
        }
    }

    /// A positive number of seconds from the environment variable `name`, if set.
    private static func seconds(_ name: String, _ environment: [String: String]) throws -> Duration? {
        guard let text = environment[name] else { return nil }
        guard let value = Double(text), value > 0, value < 3600 else {
            throw CLIFailure.usage("\(name) must be a number of seconds above 0")
        }
        return .milliseconds(Int64(value * 1000))
    }
}

/// How `serve` sends mail, from the environment.
enum MailConfiguration {
    /// SMTP (`BACKOFFICE_SMTP_URL` with `BACKOFFICE_PUBLIC_URL`), or only a log line
    /// (`BACKOFFICE_MAIL=log`). There is no default: invitations would otherwise go nowhere.
    /// - Throws: `CLIFailure.usage` naming the setting that is missing or wrong.
    static func settings(_ environment: [String: String], logger: Logger) throws -> MailSettings {
        var mail = MailSettings()
        if let url = environment["BACKOFFICE_SMTP_URL"], !url.isEmpty {
            let smtp: SMTPSettings
            do { smtp = try SMTPSettings(url: url) } catch { throw CLIFailure.usage("\(error)") }
            guard let publicURL = environment["BACKOFFICE_PUBLIC_URL"], let parsed = URL(string: publicURL),
                ["https", "http"].contains(parsed.scheme ?? ""), parsed.host != nil
            else {
                throw CLIFailure.usage(
                    "BACKOFFICE_SMTP_URL needs BACKOFFICE_PUBLIC_URL, the console's public address "
                        + "(https://backoffice.example.com): "
                        + "the links mail carries start with it")
            }
            mail.transport = SMTPMailTransport(smtp)
            mail.from = smtp.from
            mail.publicURL = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
            return mail
        }
        guard environment["BACKOFFICE_MAIL"] == "log" else {
            throw CLIFailure.usage(
                "serve needs BACKOFFICE_SMTP_URL (smtp://USER:PASSWORD@HOST:587, with BACKOFFICE_PUBLIC_URL) "
                    + "to send invitations and notices, "
                        + """
                        or BACKOFFICE_MAIL=log to run without mail (nothing is sent; each message is logged without \
                        its contents)
                        """
            )
        }
        mail.transport = LogMailTransport(logger: logger)
        if let publicURL = environment["BACKOFFICE_PUBLIC_URL"] { mail.publicURL = publicURL }
        return mail
    }

    /// Refuses to serve off this host (`--host` not a loopback address) without a public URL: the
    /// issuer of OAuth tokens and the start of mail's links would otherwise be `http://HOST:PORT`,
    /// which no client elsewhere can reach (`http://0.0.0.0:8080`).
    static func requirePublicURL(_ publicURL: String?, servingOn host: String) throws {
        let loopback = host == "localhost" || host == "::1" || host.hasPrefix("127.")
        guard publicURL == nil && !loopback else { return }
        throw CLIFailure.usage(
            "serve --host \(host) needs --public-url (or BACKOFFICE_PUBLIC_URL), the address clients reach it at "
                + "(https://backoffice.example.com): the issuer of its OAuth tokens and the start of mail's links")
    }

    /// The service's public URL (`--public-url` / `BACKOFFICE_PUBLIC_URL`: the OAuth issuer, as mail's links start
    /// with it) checked: an http(s) URL without a query, its
    /// trailing slash dropped (nil when neither is set).
    static func publicURL(_ text: String?) throws -> String? {
        guard let text else { return nil }
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil,
            url.query == nil
        else {
            throw CLIFailure.usage("--public-url: an http(s) URL without a query, such as https://backoffice.example")
        }
        return text.hasSuffix("/") ? String(text.dropLast()) : text
    }
}
