import BackofficeAPI
import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird
import Logging
import Metrics
import NIOCore
import OpenAPIHummingbird
import OpenAPIRuntime
import PostgresNIO
import Prometheus
import ServiceLifecycle

/// Builds and runs the HTTP service.
package enum BackofficeServer {
    /// The process's Prometheus registry (`ServiceMetrics.registry`).
    static var metrics: PrometheusCollectorRegistry { ServiceMetrics.registry }

    /// The application: public probes and documents, and the generated `/v1` API behind the edge
    /// (request id, body limit, authentication, problem+json). `services` run before the server
    /// starts and stop after it drains. `handEncodedLists: false` serves the hot lists through the
    /// generated path too (the reference `HandEncodedLists` is tested against).
    package static func buildApplication(
        database: Database, policies: PolicySet, settings: ServerSettings, services: [any Service], logger: Logger,
        handEncodedLists: Bool = true, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        let registry = metrics
        let router = Router(context: AppRequestContext.self)
        router.add(middleware: MetricsMiddleware())
        router.get("/healthz") { _, _ in "ok\n" }
        router.get("/readyz") { _, _ -> Response in
            do {
                try await database.client.query("SELECT 1", logger: logger)
                return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "ready\n")))
            } catch {
                return Problem.unavailable.response(requestID: "readyz")
            }
        }
        var services = services
        if let metricsPort = settings.metricsPort {
            let metricsRouter = Router()
            metricsRouter.get("/metrics") { _, _ in metricsResponse(registry) }
            services.append(
                Application(
                    router: metricsRouter,
                    configuration: .init(
                        address: .hostname(settings.host, port: metricsPort), serverName: "backoffice-metrics"),
                    logger: logger))
        } else {
            router.get("/metrics") { _, _ in metricsResponse(registry) }
        }
        router.get("/openapi.yaml") { _, _ -> Response in
            guard let document = OpenAPIDocument.yaml else { throw DomainError.notFound("The OpenAPI document") }
            return Response(
                status: .ok, headers: [.contentType: "application/yaml"],
                body: .init(byteBuffer: ByteBuffer(data: document)))
        }
        let invitationLinks = InvitationLinks(secondFactorKey: settings.secondFactorKey)
        let accessTokens = settings.accessTokens
        let generations = SigningKeyGenerations(database: database)
        OAuthDocuments(tokens: accessTokens, database: database, scopes: policies.access.scopes).register(on: router)
        try APIHandler(
            database: database, policies: policies, payments: settings.payments,
            webhookSecrets: settings.webhookSecrets,
            invitationLinks: invitationLinks, outbound: settings.outbound,
            webhookEndpointSecrets: WebhookEndpointSecrets(secondFactorKey: settings.secondFactorKey),
            accessTokens: accessTokens
        ).registerHandlers(
            on: router, serverURL: URL(string: "/")!,
            configuration: Configuration(
                dateTranscoder: RFC3339DateTranscoder(), jsonEncodingOptions: [.sortedKeys, .withoutEscapingSlashes]),
            middlewares: [ProblemMiddleware(logger: logger), ETagMiddleware(), OperationScopeMiddleware()])
        let console = try Console.serving(
            settings, database: database, policies: policies, invitationLinks: invitationLinks, on: router)
        let throttle = AddressThrottle(
            limit: policies.security.failedAuthenticationLimit,
            window: .seconds(policies.security.failedAuthenticationWindowSeconds))
        let submissionThrottle = AddressThrottle(
            limit: policies.security.publicSubmissionLimit,
            window: .seconds(policies.security.publicSubmissionWindowSeconds))
        var responder = EdgeResponder(
            inner: router.buildResponder(), database: database, maxBodySize: settings.maxBodySize,
            maxBulkBodySize: settings.maxBulkBodySize,
            bulkPaths: settings.bulkPaths,
            clientAddress: ClientAddress(trustedProxies: settings.trustedProxies), throttle: throttle,
            knownCredentials: KnownCredentials(),
            publicRoutes: .publicOperations, lagTolerantReads: .lagTolerantReads, stagedChanges: .stagedChanges,
            streamedBodies: .streamedBodies,
            submissionThrottle: submissionThrottle,
            hotLists: HandEncodedLists(
                database: database, policies: policies,
                lists: [
                    .customers, .orders, .leaderboard, .publishedArticles, .customerRecommendations, .foodByBarcode,
                ],
                answers: handEncodedLists),
            sessionUploads: SessionUploads(paths: settings.sessionBulkPaths) {
                try await console.sessionMayUpload($0, $1, action: ImportGoods.action)
            })
        responder.accessTokens = AccessTokenCheck(tokens: accessTokens, generations: generations)
        return Application(
            responder: responder,
            configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: "backoffice"),
            services: services,
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? settings.port) },
            logger: logger)
    }

    /// The registry's series in Prometheus' text format.
    private static func metricsResponse(_ registry: PrometheusCollectorRegistry) -> Response {
        Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
            body: .init(byteBuffer: ByteBuffer(string: registry.emitToString())))
    }

    /// The work `serve` does on its own, each on its interval: timed locks expired, moderation
    /// gauges, the mail outbox delivered, payments reconciled, subscriptions renewed, the day's
    /// mails, invoices reconciled (a job whose interval is nil is left to cron).
    private static func jobs(database: Database, policies: PolicySet, settings: ServerSettings) -> [any Service] {
        var services: [any Service] = [
            LockExpiryService(database: database, policies: policies, interval: settings.lockExpiryInterval),
            ModerationGaugesService(database: database, policies: policies, interval: .seconds(15)),
        ]
        if let transport = settings.mail.transport {
            services.append(
                OutboxDelivery(
                    database: database, policies: policies, settings: settings.mail, transport: transport,
                    links: InvitationLinks(secondFactorKey: settings.secondFactorKey),
                    unsubscribeLinks: settings.unsubscribeLinks))
        }
        if var webhooks = settings.webhooks {
            webhooks.outbound = settings.outbound
            services.append(
                WebhookSender(
                    database: database, policies: policies, settings: webhooks,
                    secrets: WebhookEndpointSecrets(secondFactorKey: settings.secondFactorKey)))
        }
        if let interval = settings.reconcileInterval {
            services.append(
                ReconciliationService(
                    database: database, policies: policies, payments: settings.payments, interval: interval,
                    olderThanMinutes: settings.reconcileOlderThanMinutes))
        }
        if let interval = settings.renewalInterval {
            services.append(
                RenewalService(database: database, policies: policies, payments: settings.payments, interval: interval))
        }
        if let interval = settings.dailyMailInterval {
            services.append(DailyMailService(database: database, policies: policies, interval: interval))
        }
        if let interval = settings.billingReconcileInterval {
            services.append(
                BillingReconciliationService(
                    database: database, policies: policies, payments: settings.payments, interval: interval))
        }
        return services
    }

    /// Runs the service until SIGINT/SIGTERM: connection pool, timed-lock expiry, HTTP server;
    /// on a signal the server drains first, then the rest stops.
    /// - Throws: `UnsafeServiceRole` before serving anything when the database role would bypass
    ///   row-level security (superuser, BYPASSRLS, or owner of a table).
    package static func run(
        settings: ServerSettings, logger: Logger, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    )
        async throws
    {
        let policies = try PolicySet.load(from: settings.policiesDirectory)
        try await ServiceRoleCheck.verify(settings.databaseURL, logger: logger)
        let client = PostgresClient(
            configuration: settings.databaseURL.clientConfiguration(settings.pool), backgroundLogger: logger)
        var services: [any Service] = [
            client, WALArchiveMonitor(client: client, timeout: settings.pool.leaseTimeout, logger: logger),
        ]
        var replica: ReadReplica?
        if let url = settings.readDatabaseURL {
            // A replica has the primary's roles: the same role, checked on the primary above, is safe on it too.
            guard url.user == settings.databaseURL.user else {
                throw ConfigurationError(
                    description:
                        """
                        the read replica's URL must use the same role as the database URL \
                        (\(settings.databaseURL.user)), not \(url.user)
                        """
                )
            }
            let replicaClient = PostgresClient(
                configuration: url.clientConfiguration(settings.pool), backgroundLogger: logger)
            let readReplica = ReadReplica(client: replicaClient, maxLag: settings.replicaMaxLag, logger: logger)
            services += [
                replicaClient,
                ReplicaMonitor(replica: readReplica, primary: client, timeout: settings.pool.leaseTimeout),
            ]
            replica = readReplica
            logger.info(
                "read replica configured",
                metadata: ["url": "\(url)", "max_lag_seconds": "\(settings.replicaMaxLag.inSeconds)"])
        }
        let database = Database(client: client, logger: logger, limits: settings.pool, replica: replica)
        services += jobs(database: database, policies: policies, settings: settings)
        let app = try buildApplication(
            database: database, policies: policies, settings: settings, services: services, logger: logger,
            onServerRunning: onServerRunning)
        logger.info("policies loaded", metadata: ["digest": "\(policies.digest)"])
        try await app.runService()
    }
}
