import Backoffice
import BackofficeAPI
import BackofficeConsole
import BackofficePlatform
import Foundation
import Logging
import PostgresNIO

/// `.backoffice/credentials.json`: how scripts reach the demo setup.
package struct DemoCredentials: Codable, Sendable {
    package struct Tokens: Codable, Sendable {
        package var platformAdmin: String?
        package var backendManager: String?
        package var auditor: String?
        package var appService: String?
        /// The nutrition expert's.
        package var expert: String?
        /// The forum moderator's.
        package var moderator: String?

        enum CodingKeys: String, CodingKey {
            case platformAdmin = "platform_admin", backendManager = "backend_manager", auditor, appService =
                "app_service", expert, moderator
        }
    }

    package struct Partner: Codable, Sendable {
        package var tenantID: String
        package var slug: String
        package var partnerAdmin: String?
        package var partnerStaff: String?

        enum CodingKeys: String, CodingKey {
            case tenantID = "tenant_id", slug, partnerAdmin = "partner_admin", partnerStaff = "partner_staff"
        }
    }

    package var url: String
    package var databaseURL: String
    package var superuserDatabaseURL: String
    package var tokens: Tokens
    package var partners: [Partner]
    /// The webhook secret of each payment provider the dev service accepts (`simulated`).
    package var webhookSecrets: [String: String]?
    /// The console password of each demo person operator, by email.
    package var signIns: [String: String]?
    /// The TOTP secret (base32, as authenticator apps take it) of each demo operator whose role
    /// signs in with a second factor, by email: `backoffice totp SECRET` prints its current code.
    package var secondFactors: [String: String]?
    /// The app's backend as an OAuth client (client credentials): it asks `/oauth/token` for its
    /// 15-minute access tokens.
    package var appClient: Client?

    /// An OAuth client's credentials.
    package struct Client: Codable, Sendable {
        package var clientID: String
        package var clientSecret: String

        enum CodingKeys: String, CodingKey { case clientID = "client_id", clientSecret = "client_secret" }
    }

    enum CodingKeys: String, CodingKey {
        case url, databaseURL = "database_url", superuserDatabaseURL = "superuser_database_url", tokens, partners
        case webhookSecrets = "webhook_secrets", signIns = "console_sign_ins", secondFactors = "console_second_factors"
        case appClient = "app_client"
    }
}

/// The demo data of `backoffice dev`: a platform admin, a backend manager, an auditor, the app's
/// service principal, two experts with their articles and the manager's
/// recommendations (`DemoContent.swift`), two partner tenants
/// with an admin and a staff member each, and 50 customers (two locked, one deleted). Made
/// through the domain operations, so every row is audited.
package enum DemoEnvironment {
    static let platformOperators: [(String, Role)] = [
        ("admin@healthtrack.example", .platformAdmin), ("manager@healthtrack.example", .backendManager),
        // a second manager: the second person who approves what a manager may not do alone (approvals.yaml)
        ("deputy@healthtrack.example", .backendManager),
        ("auditor@healthtrack.example", .auditor), ("app-backend@healthtrack.example", .appService),
    ]
    static let partners = [("green-grocer", "Green Grocer Ltd"), ("peak-protein", "Peak Protein Co")]
    static let firstNames = ["Ada", "Ben", "Chloe", "Dev", "Elif", "Finn", "Grace", "Hugo", "Ines", "Jonas"]
    static let lastNames = ["Lovelace", "Okafor", "Martin", "Patel", "Yilmaz"]

    /// What `prepare` hands back: the credentials and accounts to use in example commands, and
    /// the demo credentials it could not issue, each with why (an operator disabled since).
    package struct Setup: Sendable {
        package let credentials: DemoCredentials
        package let activeCustomer: UUID?
        package let lockedCustomer: UUID?
        package let skipped: [String]
    }

    /// Creates the demo database if needed, migrates it, seeds it once, and returns credentials:
    /// each token kept in `credentialsFile` when it still works, a new one for its operator
    /// otherwise, none when the operator is disabled (or gone): the demo comes back up on any
    /// state its own API can make. The demo's console passwords are hashed with bcrypt at
    /// `passwordCost` (the service's own cost unless a test asks for less).
    package static func prepare(
        cluster: EmbeddedPostgres, serviceURL: String, migrations: Migrator, policies: PolicySet,
        contentPolicies: URL? = nil,
        earningRules: URL? = nil, credentialsFile: URL, secondFactorKey: SecondFactorKey,
        passwordCost: UInt8 = PasswordRules.cost,
        logger: Logger
    ) async throws -> Setup {
        let superuser = try DatabaseURL(cluster.superuserURL)
        try await superuser.withConnection(logger: logger) { connection in
            let exists = try await firstRow(
                "SELECT 1 FROM pg_database WHERE datname = 'backoffice'", on: connection, logger: logger
            ) { _ in true }
            if exists == nil { try await connection.query("CREATE DATABASE backoffice", logger: logger) }
        }
        let owner = try DatabaseURL(cluster.url(database: "backoffice", user: "postgres"))
        // The service role's password: the one the kept credentials use, or a new one.
        let kept = FileManager.default.contents(atPath: credentialsFile.path).flatMap {
            try? JSONDecoder().decode(DemoCredentials.self, from: $0)
        }
        let keptPassword = kept.flatMap { try? DatabaseURL($0.databaseURL) }?.password.flatMap {
            $0.allSatisfy(\.isHexDigit) ? $0 : nil
        }
        let appPassword = keptPassword ?? EmbeddedPostgres.generatePassword()
        let applied = try await owner.withConnection(logger: logger) { connection in
            let applied = try await migrations.migrate(on: connection, logger: logger)
            try await connection.query(
                PostgresQuery(unsafeSQL: "ALTER ROLE backoffice_app PASSWORD '\(appPassword)'"), logger: logger)
            return applied
        }
        if !applied.isEmpty {
            logger.info("migrations applied", metadata: ["migrations": "\(applied.joined(separator: ", "))"])
        }
        let appURL = cluster.url(database: "backoffice", user: "backoffice_app", password: appPassword)
        return try await Database.with(url: try DatabaseURL(appURL), logger: logger, limits: setupLimits) { database in
            try await seedOnce(database: database, policies: policies, earningRules: earningRules)
            try await seedAddedLater(database: database, policies: policies)
            if let contentPolicies {
                try await publishContentPolicies(from: contentPolicies, database: database, policies: policies)
            }
            var (credentials, skipped) = try await credentials(
                database: database, policies: policies, file: credentialsFile, serviceURL: serviceURL, appURL: appURL,
                ownerURL: cluster.url(database: "backoffice", user: "postgres"), secondFactorKey: secondFactorKey,
                passwordCost: passwordCost)
            if credentials.webhookSecrets?["simulated"] == nil {
                credentials.webhookSecrets = ["simulated": WebhookSignature.generateSecret()]
            }
            let (active, locked) = try await database.transaction(for: .system) { connection in
                let active = try await firstRow(
                    "SELECT id FROM customers WHERE status = 'active' ORDER BY email LIMIT 1", on: connection,
                    logger: logger
                ) { try $0.decode(UUID.self) }
                let locked = try await firstRow(
                    "SELECT id FROM customers WHERE status = 'locked' ORDER BY email LIMIT 1", on: connection,
                    logger: logger
                ) { try $0.decode(UUID.self) }
                return (active, locked)
            }
            return Setup(credentials: credentials, activeCustomer: active, lockedCustomer: locked, skipped: skipped)
        }
    }

    /// The demo credentials: each kept token that still authenticates, else a new one for its
    /// operator when that operator is active; the ones it cannot issue, with why.
    private static func credentials(
        database: Database, policies: PolicySet, file credentialsFile: URL, serviceURL: String, appURL: String,
        ownerURL: String,
        secondFactorKey: SecondFactorKey, passwordCost: UInt8
    ) async throws -> (DemoCredentials, skipped: [String]) {
        let kept = FileManager.default.contents(atPath: credentialsFile.path).flatMap {
            try? JSONDecoder().decode(DemoCredentials.self, from: $0)
        }
        let context = OperationContext.system("demo-tokens", policies: policies)
        let operators = try await database.transaction(for: .system) { connection in
            var all: [String: Operator] = [:]
            // The demo's own operators are the first with their emails (a partner may later add one with the same email
            // in its tenant).
            for try await row in try await connection.query(
                "SELECT \(unescaped: Operator.columns) FROM operators ORDER BY created_at, id", logger: database.logger)
            {
                let found = try Operator(row: row)
                if all[found.email] == nil { all[found.email] = found }
            }
            return all
        }
        let authenticator = Authenticator(database: database)
        var skipped: [String] = []
        func token(_ kept: String?, _ email: String) async throws -> String? {
            if let kept, try await authenticator.principal(for: kept) != nil { return kept }
            guard let owner = operators[email] else {
                skipped.append("\(email): no such operator")
                return nil
            }
            guard owner.status == "active" else {
                skipped.append("\(email): the operator is \(owner.status)")
                return nil
            }
            return try await database.runAsSystem(
                CreateToken(operatorID: owner.id, name: "dev", expiresInHours: nil), context: context
            ).1.value
        }
        let tokens = DemoCredentials.Tokens(
            platformAdmin: try await token(kept?.tokens.platformAdmin, "admin@healthtrack.example"),
            backendManager: try await token(kept?.tokens.backendManager, "manager@healthtrack.example"),
            auditor: try await token(kept?.tokens.auditor, "auditor@healthtrack.example"),
            appService: try await token(kept?.tokens.appService, "app-backend@healthtrack.example"),
            expert: try await token(kept?.tokens.expert, experts[0]),
            moderator: try await token(kept?.tokens.moderator, moderatorEmail))
        var partnerCredentials: [DemoCredentials.Partner] = []
        for (slug, _) in partners {
            guard let admin = operators["admin@\(slug).example"] else { continue }
            let keptPartner = kept?.partners.first { $0.slug == slug }
            partnerCredentials.append(
                DemoCredentials.Partner(
                    tenantID: admin.tenantID.text, slug: slug,
                    partnerAdmin: try await token(keptPartner?.partnerAdmin, "admin@\(slug).example"),
                    partnerStaff: try await token(keptPartner?.partnerStaff, "staff@\(slug).example")))
        }
        var signIns: [String: String] = [:]
        var secondFactors: [String: String] = [:]
        let people =
            platformOperators.filter { $0.1 != .appService }.map(\.0)
            + partners.flatMap { ["admin@\($0.0).example", "staff@\($0.0).example"] } + experts + [moderatorEmail]
        for email in people {
            guard let owner = operators[email], owner.status == "active" else { continue }
            signIns[email] = try await password(
                kept?.signIns?[email], for: owner, cost: passwordCost, database: database, context: context)
            if policies.console.secondFactorRequired.contains(owner.role.rawValue) {
                secondFactors[email] = try await secondFactor(
                    kept?.secondFactors?[email], for: owner, key: secondFactorKey, database: database, context: context)
            }
        }
        let credentials = DemoCredentials(
            url: serviceURL, databaseURL: appURL, superuserDatabaseURL: ownerURL, tokens: tokens,
            partners: partnerCredentials,
            webhookSecrets: kept?.webhookSecrets, signIns: signIns, secondFactors: secondFactors,
            appClient: try await appClient(kept?.appClient, database: database, policies: policies, context: context))
        return (credentials, skipped)
    }

    /// The app's backend's OAuth client: the kept one while it is registered and unrevoked, else a
    /// new one with every scope of `app_service`, through the real operation.
    private static func appClient(
        _ kept: DemoCredentials.Client?, database: Database, policies: PolicySet, context: OperationContext
    ) async throws -> DemoCredentials.Client {
        if let kept, let id = UUID(uuidString: kept.clientID),
            try await stored(
                """
                SELECT 1 FROM oauth_clients
                WHERE id = \(id) AND revoked_at IS NULL
                    AND secret_hash = \(ByteBuffer(bytes: TokenSecret(value: kept.clientSecret).hash))
                """, database: database, { _ in true }) == true
        {
            return kept
        }
        let (client, secret) = try await database.runAsSystem(
            RegisterOAuthClient(
                name: "the app's backend", role: .appService, tenantID: nil,
                scopes: policies.access.scopes(of: .appService), allowedAddresses: nil),
            context: context)
        guard let secret else { throw DomainError.inconsistent("the app's client was registered without a secret") }
        return DemoCredentials.Client(clientID: client.id.text, clientSecret: secret.value)
    }

    /// The first row's value of `query`, read as the system (nil without a row).
    private static func stored<T: Sendable>(
        _ query: PostgresQuery, database: Database, _ decode: @escaping @Sendable (PostgresRow) throws -> T
    ) async throws -> T? {
        try await database.transaction(for: .system) { connection in
            try await firstRow(query, on: connection, logger: database.logger, decode)
        }
    }

    /// A demo operator's console password: the kept one while it still signs in, else a new
    /// random one, set through the real operation (bcrypt).
    private static func password(
        _ kept: String?, for owner: Operator, cost: UInt8, database: Database, context: OperationContext
    ) async throws -> String {
        let stored = try await stored(
            "SELECT password_hash FROM operator_passwords WHERE operator_id = \(owner.id)", database: database
        ) { try $0.decode(String.self) }
        if let kept, let stored, try await PasswordRules.verify(kept, hash: stored) { return kept }
        let password = "demo-" + Base64URL.random(bytes: 12)
        try PasswordRules.check(password)
        _ = try await database.runAsSystem(
            SetOperatorPassword(operatorID: owner.id, passwordHash: try await PasswordRules.hash(password, cost: cost)),
            context: context)
        return password
    }

    /// A demo operator's TOTP secret (base32): the kept one while it is the operator's, else a new
    /// one enrolled through the real operation (its recovery codes are not kept: `dev` prints the
    /// secret, and `backoffice totp SECRET` the code).
    private static func secondFactor(
        _ kept: String?, for owner: Operator, key: SecondFactorKey, database: Database, context: OperationContext
    ) async throws -> String {
        let stored = try await stored(
            "SELECT sealed_secret FROM operator_second_factors WHERE operator_id = \(owner.id)", database: database
        ) { Array(try $0.decode(ByteBuffer.self).readableBytesView) }
        if let kept, let secret = TOTPSecret(base32: kept), let stored, (try? key.open(stored, for: owner.id)) == secret
        {
            return kept
        }
        let secret = TOTPSecret.generate()
        _ = try await database.runAsSystem(
            EnrolSecondFactor(
                operatorID: owner.id, sealedSecret: try key.seal(secret, for: owner.id), confirmedStep: 0,
                recoveryCodeHashes: RecoveryCodes.generate().map { RecoveryCodes.hash($0, operatorID: owner.id) },
                replacing: true),
            context: context)
        return secret.base32
    }

    /// Publishes every `*.md` of `folder` (front matter: `slug`, `title`) as a content policy, through
    /// the real operation: a new version when the file changed, nothing otherwise.
    private static func publishContentPolicies(from folder: URL, database: Database, policies: PolicySet) async throws {
        let context = OperationContext.system("content-policies", policies: policies)
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for name in files.sorted() where name.hasSuffix(".md") {
            let path = folder.appendingPathComponent(name).path
            guard let text = FileManager.default.contents(atPath: path).map({ String(decoding: $0, as: UTF8.self) })
            else { continue }
            let document = try FrontMatterDocument(text: text)
            _ = try await database.runAsSystem(
                PublishContentPolicy(
                    slug: document.text("slug") ?? String(name.dropLast(3)), title: document.text("title") ?? "",
                    body: document.body ?? ""),
                context: context)
        }
    }

    /// The setup's pool: it waits for its own cluster however busy the machine is (the service's pool
    /// gives up after 2 s to connect and 5 s to lease, to answer a request 503 in time; nobody waits on
    /// this one).
    static let setupLimits: PoolLimits = {
        var limits = PoolLimits()
        (limits.connectTimeout, limits.leaseTimeout) = (.seconds(60), .seconds(120))
        return limits
    }()

    private static func seedOnce(database: Database, policies: PolicySet, earningRules: URL?) async throws {
        let seeded = try await database.transaction(for: .system) { connection in
            try await firstRow(
                "SELECT count(*) FROM operators WHERE email = 'admin@healthtrack.example'", on: connection,
                logger: database.logger
            ) {
                try $0.decode(Int.self)
            } ?? 0
        }
        guard seeded == 0 else { return }
        let context = OperationContext.system("demo-data", policies: policies)
        for (email, role) in platformOperators {
            _ = try await database.runAsSystem(
                CreateOperator(email: email, role: role, tenantID: nil), context: context)
        }
        try await seedShops(database: database, context: context)
        let customers = try await seedCustomers(database: database, context: context)
        var byEmail = customers.sorted { $0.email < $1.email }
        byEmail[1] = try await database.runAsSystem(
            TransitionAccount(customerID: byEmail[1].id, move: .lock, reason: "Chargeback under investigation"),
            context: context)
        byEmail[2] = try await database.runAsSystem(
            TransitionAccount(
                customerID: byEmail[2].id, move: .lock, reason: "Suspicious sign-ins from a new country",
                until: database.clock.now().addingTimeInterval(7 * 86_400)),
            context: context)
        byEmail[3] = try await database.runAsSystem(
            TransitionAccount(customerID: byEmail[3].id, move: .delete, reason: "Customer asked to close the account"),
            context: context)
        let now = database.clock.now()
        let welcome = try await database.runAsSystem(
            CreateMessage(
                title: "Winter Steps starts Monday",
                body: "Walk **10,000 steps** a day in December and earn FitPoints for every day you do.",
                severity: .info, expiresAt: now.addingTimeInterval(30 * 86_400)), context: context)
        _ = try await database.runAsSystem(PublishMessage(messageID: welcome.id), context: context)
        let maintenance = try await database.runAsSystem(
            CreateMessage(
                title: "Planned maintenance",
                body: "Sign-in and syncing pause for up to one hour while we upgrade our database.",
                severity: .maintenance, publishAt: now.addingTimeInterval(86_400),
                expiresAt: now.addingTimeInterval(3 * 86_400 + 3600),
                windowStartsAt: now.addingTimeInterval(3 * 86_400),
                windowEndsAt: now.addingTimeInterval(3 * 86_400 + 3600)), context: context)
        _ = try await database.runAsSystem(PublishMessage(messageID: maintenance.id), context: context)
        let active = byEmail.filter { $0.status == .active }  // the statuses as they now are
        try await seedRewards(customers: active, earningRules: earningRules, database: database, context: context)
        try await seedOrders(customers: active, database: database, context: context)
    }

    /// 50 customers as the app syncs them; every other one subscribed to the monthly plan (a first
    /// subscription: on its free trial).
    private static func seedCustomers(database: Database, context: OperationContext) async throws -> [Customer] {
        var customers: [Customer] = []
        for index in 0..<50 {
            let first = firstNames[index % firstNames.count]
            let last = lastNames[index / firstNames.count % lastNames.count]
            let email = "\(first.lowercased()).\(last.lowercased())\(index < 10 ? "" : String(index))@example.com"
            var (customer, _) = try await database.runAsSystem(
                SyncCustomer(id: database.ids.next(), email: email, displayName: "\(first) \(last)"), context: context)
            if index % 2 == 0 {
                _ = try await database.runStagedAsSystem(
                    Subscribe(
                        customerID: customer.id, planID: "monthly",
                        paymentMethod: SimulatedPaymentGateway.approvedMethod,
                        payments: SimulatedPaymentGateway()), context: context)
                customer = try await database.readAsSystem(GetCustomerAccount(id: customer.id), context: context)
            }
            customers.append(customer)
        }
        return customers
    }
}
