import BackofficeAPI
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// One test's world: its own database (migrated), the service's pool (role backoffice_app),
/// the real policies, and principals with tokens for every role and two partner tenants.
struct TestEnvironment: Sendable {
    let database: Database
    let owner: DatabaseURL
    /// A small pool of the owner's connections for `asOwner` and `ownerScalar`: a test checks
    /// rows and audit counts often, and a new connection each time was a password handshake and
    /// a server process each time.
    let ownerPool: PostgresClient
    let appURL: DatabaseURL
    let policies: PolicySet
    let fixture: Fixture
    /// The clock every unit of work reads "now" from: it moves only when a test advances it.
    let clock: ManualWallClock

    /// Tokens and ids made through the real operations (so they are audited too).
    struct Fixture: Sendable {
        var tokens: [Role: String] = [:]
        var principals: [Role: Principal] = [:]
        var partners: [Partner] = []

        struct Partner: Sendable {
            let tenantID: UUID
            let slug: String
            let adminToken: String
            let staffToken: String
            let admin: Principal
        }
    }

    /// The simulated provider's webhook secret the test service accepts.
    static let webhookSecret = "whsec_test_0123456789abcdef"
    /// The key the test service seals TOTP secrets with.
    static let secondFactorKey = SecondFactorKey.generate().key

    /// The project's policies, read once per run (a test that needs others changes a copy).
    static func loadPolicies() throws -> PolicySet { try projectPolicies.get() }
    private static let projectPolicies = Result {
        try PolicySet.load(from: projectRoot.appendingPathComponent("policies"))
    }

    /// How many environments exist at once: each holds a pool and an owner's connections, and the
    /// suite runs every test in parallel, so without a bound the cluster's 200 connections ran out
    /// on a full run ("too many clients already").
    private static let gate = EnvironmentGate(width: 24)

    /// Runs `body` in a fresh environment.
    static func with<T: Sendable>(_ body: @Sendable (TestEnvironment) async throws -> T) async throws -> T {
        await gate.enter()
        do {
            let result = try await open(body)
            await gate.leave()
            return result
        } catch {
            await gate.leave()
            throw error
        }
    }

    private static func open<T: Sendable>(_ body: @Sendable (TestEnvironment) async throws -> T) async throws -> T {
        let (owner, app, _, fixture) = try await TestCluster.shared.freshDatabase()
        let policies = try loadPolicies()
        let clock = ManualWallClock()
        do {
            // Tests run side by side on a loaded machine: a lease may wait long (the limits have their own tests).
            let limits = {
                var limits = PoolLimits.forTests
                limits.leaseTimeout = .seconds(60)
                return limits
            }()
            return try await Database.with(url: owner, logger: testLogger, maximumConnections: 2, limits: .forTests) {
                ownerDatabase in
                try await Database.with(url: app, logger: testLogger, clock: clock, limits: limits) { database in
                    try await body(
                        TestEnvironment(
                            database: database, owner: owner, ownerPool: ownerDatabase.client, appURL: app,
                            policies: policies, fixture: fixture,
                            clock: clock))
                }
            }
        } catch let error as PSQLError {
            throw TestSetupError(description: String(reflecting: error))  // PSQLError's description is redacted
        }
    }

    /// Seeds the fixture through the real operations (so it is audited too): once per run, in the
    /// template every test's database is copied from (`TestCluster`).
    static func seed(database: Database, policies: PolicySet) async throws -> Fixture {
        let context = OperationContext.system("test-fixture", policies: policies)
        var fixture = Fixture()
        func issue(_ op: Operator) async throws -> (String, Principal) {
            let (token, secret) = try await database.runAsSystem(
                CreateToken(operatorID: op.id, name: "test", expiresInHours: nil), context: context)
            return (secret.value, Principal(operatorID: op.id, role: op.role, tenantID: op.tenantID, tokenID: token.id))
        }
        for role in [Role.platformAdmin, .backendManager, .auditor, .appService, .expert, .moderator] {
            let op = try await database.runAsSystem(
                CreateOperator(email: "\(role.rawValue)@test.example", role: role, tenantID: nil), context: context)
            let (token, principal) = try await issue(op)
            fixture.tokens[role] = token
            fixture.principals[role] = principal
        }
        for slug in ["alpha-shop", "beta-shop"] {
            let tenant = try await database.runAsSystem(
                CreateTenant(slug: slug, name: slug.capitalized), context: context)
            let admin = try await database.runAsSystem(
                CreateOperator(email: "admin@\(slug).example", role: .partnerAdmin, tenantID: tenant.id),
                context: context)
            let staff = try await database.runAsSystem(
                CreateOperator(email: "staff@\(slug).example", role: .partnerStaff, tenantID: tenant.id),
                context: context)
            let (adminToken, adminPrincipal) = try await issue(admin)
            let (staffToken, _) = try await issue(staff)
            fixture.partners.append(
                .init(
                    tenantID: tenant.id, slug: slug, adminToken: adminToken, staffToken: staffToken,
                    admin: adminPrincipal))
        }
        return fixture
    }

    func context(_ role: Role, requestID: String = UUID().uuidString.lowercased()) -> OperationContext {
        OperationContext(
            principal: fixture.principals[role]!, requestID: requestID, sourceIP: "127.0.0.1", policies: policies)
    }

    /// Creates a customer as the app would.
    func customer(_ email: String = "c\(UUID().uuidString.prefix(8).lowercased())@example.com") async throws -> Customer
    {
        try await database.run(
            SyncCustomer(id: UUID(), email: email, displayName: "Test Customer"), context: context(.appService)
        ).0
    }

    /// Runs SQL as the database owner (a superuser: bypasses row-level security and can disable
    /// triggers), in a transaction of its own with every row consumed, as the service runs its
    /// statements: an error raised by a function among the rows, or by a deferred check at COMMIT,
    /// is thrown (and the transaction rolled back, so the pooled connection serves the next call).
    func asOwner(_ sql: String) async throws {
        try await ownerPool.withConnection { connection in
            do {
                for statement in ["BEGIN", sql, "COMMIT"] {
                    for try await _ in try await connection.query(
                        PostgresQuery(unsafeSQL: statement), logger: testLogger)
                    {}
                }
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: testLogger)
                throw error
            }
        }
    }

    /// Runs `sql` as the service role in a transaction acting for `principal`; the problem it fails with, if any.
    func asService(_ principal: Principal, _ sql: String) async -> Problem? {
        do {
            try await database.transaction(for: principal) { connection in
                // Consume the rows: an error raised while a function runs arrives with them.
                for try await _ in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: testLogger) {}
            }
            return nil
        } catch {
            return Problem.describing(error) ?? Problem(status: 0, code: "unexpected", title: "\(error)")
        }
    }

    func ownerScalar<T: PostgresDecodable & Sendable>(_ sql: String, as type: T.Type) async throws -> T? {
        try await ownerPool.withConnection { connection in
            var first: T?
            for try await value in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: testLogger).decode(
                T.self)
            {
                first = first ?? value  // every row read: the connection goes back to the pool idle
            }
            return first
        }
    }

    /// Runs `body` against the HTTP application (generated handlers behind the real edge); with
    /// `trustedProxies`, over a real socket from 127.0.0.1 (so `X-Forwarded-For` can name clients).
    /// What a test server resolves names with: this table and nothing else (no test reaches the
    /// network), under `serve`'s rules. Public names first, then one per kind of address refused.
    static var outbound: OutboundSettings {
        var settings = OutboundSettings()
        settings.resolver = TableResolver([
            "hooks.shop.example": ["93.184.215.14"],
            "hooks-v6.shop.example": ["2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
            "loopback.example": ["127.0.0.1"], "loopback-v6.example": ["::1"], "private.example": ["10.1.2.3"],
            "private-172.example": ["172.20.0.9"], "home.example": ["192.168.1.20"],
            "link-local.example": ["169.254.10.1"],
            "metadata.example": ["169.254.169.254"], "metadata-v6.example": ["fd00:ec2::254"],
            "ula.example": ["fd12::5"],
            "mapped.example": ["::ffff:127.0.0.1"], "mapped-private.example": ["::ffff:10.0.0.1"],
            "nat64-private.example": ["64:ff9b::a00:1"], "sixtofour-loopback.example": ["2002:7f00:1::1"],
            "link-local-v6.example": ["fe80::1"], "unspecified.example": ["0.0.0.0"], "cgnat.example": ["100.64.0.1"],
            "mixed.example": ["93.184.215.14", "10.0.0.7"],
        ])
        return settings
    }

    func withApp<T: Sendable>(
        handEncodedLists: Bool = true, trustedProxies: [CIDR]? = nil, logger: Logger = testLogger,
        policies: PolicySet? = nil,
        payments: (any PaymentGateway)? = nil, database: Database? = nil, maxBodySize: Int? = nil,
        maxBulkBodySize: Int? = nil,
        liveUpdates: LiveUpdates? = nil, signInGate: SignInGate? = nil, outbound: OutboundSettings? = nil,
        _ body: @Sendable (any TestClientProtocol) async throws -> T
    ) async throws -> T {
        var settings = ServerSettings(
            host: "127.0.0.1", port: 0, databaseURL: appURL,
            policiesDirectory: projectRoot.appendingPathComponent("policies"))
        settings.trustedProxies = trustedProxies ?? []
        settings.webhookSecrets = ["simulated": [Self.webhookSecret]]
        settings.secondFactorKey = Self.secondFactorKey
        settings.outbound = outbound ?? Self.outbound
        if let payments { settings.payments = payments }
        if let maxBodySize { settings.maxBodySize = maxBodySize }
        if let maxBulkBodySize { settings.maxBulkBodySize = maxBulkBodySize }
        if let liveUpdates { settings.consoleLiveUpdates = liveUpdates }
        // The test operators' passwords are hashed at bcrypt's least cost (consolePassword): so is an unknown email's
        // check.
        settings.signInGate =
            signInGate
            ?? SignInGate(
                secondFactorKey: Self.secondFactorKey, passwordCost: 4, refusalDelay: .zero, slowStep: .zero)
        let app = try BackofficeServer.buildApplication(
            database: database ?? self.database, policies: policies ?? self.policies, settings: settings, services: [],
            logger: logger,
            handEncodedLists: handEncodedLists)
        return try await app.test(trustedProxies == nil ? .router : .live) { client in try await body(client) }
    }
}

extension PoolLimits {
    /// The service's limits with a connect timeout for a machine busy with builds and parallel
    /// suites (the limits under test are set by the tests that test them).
    static var forTests: PoolLimits {
        var limits = PoolLimits()
        limits.connectTimeout = .seconds(10)
        return limits
    }
}

/// One HTTP call's outcome, with the body parsed as JSON.
struct Reply: Sendable {
    let status: Int
    let headers: HTTPFields
    let text: String

    /// The body as a JSON object; a body that is not JSON fails the test (it is never read as empty).
    var json: [String: Any] {
        guard !text.isEmpty else { return [:] }
        do {
            return try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
        } catch {
            Issue.record("the body is not JSON: \(text.prefix(200))")
            return [:]
        }
    }
    subscript(_ key: String) -> String? { json[key].map { "\($0)" } }

    /// The body decoded as one of the contract's generated types (dates as the service writes them).
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONDecoder.contract.decode(T.self, from: Data(text.utf8))
    }
}

extension JSONDecoder {
    /// A decoder of the contract's objects (times as `RFC3339DateTranscoder` reads them).
    static var contract: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            try RFC3339DateTranscoder().decode(try decoder.singleValueContainer().decode(String.self))
        }
        return decoder
    }
}

extension Dictionary where Key == String, Value == String {
    /// A header of a fresh Idempotency-Key (for a change that requires one, sent once).
    static var newIdempotencyKey: Self { ["Idempotency-Key": UUID().uuidString] }
}

extension TestClientProtocol {
    /// Sends a JSON request with an optional bearer token and extra headers.
    func call(
        _ method: HTTPRequest.Method, _ uri: String, token: String?, json: String? = nil,
        headers extra: [String: String] = [:]
    ) async throws -> Reply {
        try await send(method, uri, token: token, bytes: json.map { Array($0.utf8) }, headers: extra)
    }

    /// Sends raw bytes as an `application/json` body (for bodies a String cannot hold).
    func send(
        _ method: HTTPRequest.Method, _ uri: String, token: String?, bytes: [UInt8]?,
        headers extra: [String: String] = [:]
    ) async throws
        -> Reply
    {
        var headers = HTTPFields()
        if let token { headers[.authorization] = "Bearer \(token)" }
        if bytes != nil { headers[.contentType] = "application/json" }
        for (name, value) in extra { headers[HTTPField.Name(name)!] = value }
        return try await execute(uri: uri, method: method, headers: headers, body: bytes.map { ByteBuffer(bytes: $0) })
        { response in
            Reply(status: Int(response.status.code), headers: response.headers, text: String(buffer: response.body))
        }
    }
}

/// At most `width` holders at once; the others wait in order.
actor EnvironmentGate {
    let width: Int
    private var inside = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(width: Int) { self.width = width }

    func enter() async {
        if inside < width {
            inside += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func leave() {
        if waiting.isEmpty {
            inside -= 1
        } else {
            waiting.removeFirst().resume()  // the place passes to the next in line
        }
    }
}
