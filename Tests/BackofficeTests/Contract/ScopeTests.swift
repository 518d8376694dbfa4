import Dispatch
import Foundation
import HTTPTypes
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// Scopes on every credential: the contract names each operation's scope, a call needs its role's
/// grant and its scope, and a token may be bound to source networks.
@Suite("Scopes: every operation needs its scope")
struct ScopeTests {
    @Test("each operation's contract security names the one scope access.yaml gives its action")
    func contractNamesEachScope() throws {
        let contract = try Contract.load()
        let access = try TestEnvironment.loadPolicies().access
        for operation in contract.operations {
            guard let action = operation.action.flatMap(Action.init(rawValue:)) else { continue }
            if operation.isPublic {
                #expect(operation.scopes.isEmpty, "\(operation) is public and needs no scope")
            } else {
                let scope = access.scope(of: action) ?? "(none)"
                #expect(
                    operation.scopes == [scope],
                    "\(operation): the contract names \(operation.scopes), access.yaml puts '\(action)' in \(scope)")
            }
        }
        #expect(access.scopes.count > 40, "scopes read from access.yaml: \(access.scopes.count)")
        #expect(access.scopes(of: .partnerStaff).contains("orders:read"))
        #expect(!access.scopes(of: .partnerStaff).contains("tenants:write"))
        let texts = try PolicySet.texts(in: projectRoot.appendingPathComponent("policies"))
        let access0 = texts["access.yaml"] ?? ""
        for (broken, why) in [
            (
                access0.replacingOccurrences(of: "\"session:read\": [session.read]\n", with: ""),
                "an action without scope"
            ),
            (
                access0.replacingOccurrences(
                    of: "\"tokens:read\": [tokens.list]", with: "\"tokens:read\": [tokens.list, tokens.create]"),
                "an action in two scopes"
            ),
            (access0.replacingOccurrences(of: "\"tokens:read\":", with: "\"Tokens-Read\":"), "a malformed name"),
        ] {
            #expect(throws: PolicyError.self, "\(why) is refused") {
                try PolicySet.parse(texts.merging(["access.yaml": broken]) { $1 })
            }
        }
    }

    @Test(
        """
        every operation, called with a token of a role that may perform it but without its scope: 403 \
        insufficient_scope, and nothing changes
        """
    )
    func everyOperationRefusesWithoutItsScope() async throws {
        let contract = try Contract.load()
        try await TestEnvironment.with { env in
            let ids = try await ContractFixture.make(env)
            let admin = try #require(env.fixture.principals[.platformAdmin]?.operatorID)
            let all = env.policies.access.scopes(of: .platformAdmin)
            var withoutScope: [String: String] = [:]
            for scope in all {
                withoutScope[scope] = try await Self.token(env, for: admin, scopes: all.filter { $0 != scope })
            }
            let tokens = withoutScope
            let events = try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self)
            let checked = try await env.withApp(policies: try ContractFixture.policiesWithoutAuthenticationLimit()) {
                client in
                var checked = 0
                for operation in contract.operations where !operation.isPublic {
                    let scope = try #require(operation.scopes.first, "\(operation) names a scope")
                    let path = try ContractFixture.fill(operation, ids: ids.partnerA)
                    let json = try operation.bodySchema.map {
                        String(
                            decoding: try JSONSerialization.data(
                                withJSONObject: contract.sampleBody($0, ids: ids.partnerA)), as: UTF8.self)
                    }
                    let reply = try await client.call(
                        operation.method, path, token: try #require(tokens[scope]), json: json,
                        headers: operation.headers)
                    let said = "\(operation) without \(scope): \(reply.status) \(reply.text.prefix(300))"
                    #expect(reply.status == 403 && reply["code"] == "insufficient_scope", "\(said)")
                    #expect(reply["detail"]?.contains(scope) == true, "the refusal names the scope: \(said)")
                    checked += 1
                }
                return checked
            }
            #expect(checked == contract.operations.filter { !$0.isPublic }.count)
            #expect(
                try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) == events,
                "no refused call changed anything")
        }
    }

    @Test(
        """
        a token narrowed to customers:read lists accounts but cannot lock one; with customers:lock it can; \
        a narrowed token's scopes are listed, and a partner admin narrows its staff's token
        """
    )
    func narrowedTokens() async throws {
        try await TestEnvironment.with { env in
            let manager = try #require(env.fixture.principals[.backendManager]?.operatorID)
            let reader = try await Self.token(env, for: manager, scopes: ["customers:read"])
            let locker = try await Self.token(env, for: manager, scopes: ["customers:read", "customers:lock"])
            let ids = try await ContractFixture.make(env).partnerA
            let customer = ids["customer_id"] ?? ""
            try await env.withApp { client in
                #expect(try await client.call(.get, "/v1/customers", token: reader).status == 200)
                let lock = #"{"reason":"scope test"}"#
                let refused = try await client.call(
                    .post, "/v1/customers/\(customer)/lock", token: reader, json: lock, headers: .newIdempotencyKey)
                #expect(refused.status == 403 && refused["code"] == "insufficient_scope", "\(refused.text)")
                let locked = try await client.call(
                    .post, "/v1/customers/\(customer)/lock", token: locker, json: lock, headers: .newIdempotencyKey)
                #expect(locked.status == 200, "\(locked.text)")
                let staff = ids["operator_id"]
                let made = try await client.call(
                    .post, "/v1/tokens", token: env.fixture.partners[0].adminToken,
                    json: #"{"operator_id":"\#(staff ?? "")","scopes":["orders:read","orders:read"]}"#,
                    headers: .newIdempotencyKey)
                #expect(made.status == 201, "\(made.text)")
                let token = made.json["token"] as? [String: Any]
                #expect(token?["scopes"] as? [String] == ["orders:read"], "\(made.text)")
                let secret = try #require(made["secret"])
                #expect(try await client.call(.get, "/v1/orders", token: secret).status == 200)
                let goods = try await client.call(.get, "/v1/goods", token: secret)
                #expect(goods.status == 403 && goods["code"] == "insufficient_scope", "\(goods.text)")
            }
        }
    }

    @Test(
        """
        a token's scopes and networks are checked: an unknown scope, a look-alike, another role's scope, none, \
        a malformed network, too many: 422 naming the field, and no token is made
        """
    )
    func badLimitsAreRefused() async throws {
        try await TestEnvironment.with { env in
            let staff = try #require(
                try await env.ownerScalar(
                    "SELECT id::text FROM operators WHERE role = 'partner_staff' LIMIT 1", as: String.self))
            let tokens = try await env.ownerScalar("SELECT count(*) FROM tokens", as: Int.self)
            let many = (1...21).map { "\"10.0.\($0).0/24\"" }.joined(separator: ",")
            let cases: [(String, String)] = [
                (#""scopes":["orders:teleport"]"#, "scopes"),
                (#""scopes":["orders:reаd"]"#, "scopes"),  // a Cyrillic а
                (#""scopes":["tenants:write"]"#, "scopes"),
                (#""scopes":[]"#, "scopes"),
                (#""allowed_addresses":["10.0.0.300/8"]"#, "allowed_addresses"),
                (#""allowed_addresses":["10.0.0.0/33"]"#, "allowed_addresses"),
                (#""allowed_addresses":["10.0.0.0/+8"]"#, "allowed_addresses"),
                (#""allowed_addresses":["example.com"]"#, "allowed_addresses"),
                (#""allowed_addresses":[]"#, "allowed_addresses"),
                ("\"allowed_addresses\":[\(many)]", "allowed_addresses"),
            ]
            try await env.withApp { client in
                for (limit, field) in cases {
                    let reply = try await client.call(
                        .post, "/v1/tokens", token: env.fixture.tokens[.platformAdmin],
                        json: #"{"operator_id":"\#(staff)",\#(limit)}"#, headers: .newIdempotencyKey)
                    let fields = (reply.json["errors"] as? [[String: Any]] ?? []).compactMap { $0["field"] as? String }
                    #expect(reply.status == 422 && fields.contains(field), "\(limit): \(reply.status) \(reply.text)")
                }
            }
            #expect(try await env.ownerScalar("SELECT count(*) FROM tokens", as: Int.self) == tokens)
        }
    }

    @Test(
        """
        a token bound to 127.0.0.2 answers a real client connecting from 127.0.0.2, and refuses 127.0.0.1 with \
        403 address_not_allowed; a network (127.0.0.0/30) is stored in its canonical form
        """
    )
    func allowListByAddress() async throws {
        try await TestEnvironment.with { env in
            let manager = try #require(env.fixture.principals[.backendManager]?.operatorID)
            let bound = try await Self.token(env, for: manager, allowedAddresses: ["127.0.0.2"])
            let network = try await Self.token(env, for: manager, allowedAddresses: ["127.0.0.1/30", "::1"])
            let stored = try await env.ownerScalar(
                """
                SELECT allowed_addresses::text FROM tokens
                WHERE allowed_addresses IS NOT NULL AND cardinality(allowed_addresses) = 2
                """,
                as: String.self)
            #expect(stored == "{127.0.0.0/30,::1/128}")
            try await env.withApp(trustedProxies: []) { client in
                let port = try #require(client.port)
                let fromTwo = try await Self.get("/v1/me", port: port, token: bound, from: "127.0.0.2")
                #expect(fromTwo.hasPrefix("200"), "from 127.0.0.2: \(fromTwo)")
                let fromOne = try await Self.get("/v1/me", port: port, token: bound, from: "127.0.0.1")
                #expect(
                    fromOne.hasPrefix("403") && fromOne.contains("address_not_allowed"), "from 127.0.0.1: \(fromOne)")
                let viaClient = try await client.call(.get, "/v1/me", token: bound)
                #expect(viaClient.status == 403 && viaClient["code"] == "address_not_allowed", "\(viaClient.text)")
                let inNetwork = try await Self.get("/v1/me", port: port, token: network, from: "127.0.0.3")
                #expect(inNetwork.hasPrefix("200"), "from 127.0.0.3 in 127.0.0.0/30: \(inNetwork)")
                let outside = try await Self.get("/v1/me", port: port, token: network, from: "127.0.0.9")
                #expect(outside.hasPrefix("403"), "from 127.0.0.9: \(outside)")
            }
        }
    }

    @Test(
        """
        a narrowed credential issues nothing broader: a token or a client made with a partner admin's token \
        narrowed to some scopes and networks gets those by default, and asking for another scope or a wider \
        network is 422 beyond_credential
        """
    )
    func narrowedIssuersGrantNoMore() async throws {
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[0]
            let admin = try #require(partner.admin.operatorID)
            let issuer = Principal(
                operatorID: admin, role: .partnerAdmin, tenantID: partner.tenantID, tokenID: nil,
                scopes: ["tokens:write", "clients:write", "orders:read"], allowedAddresses: [try CIDR("10.1.0.0/16")])
            let context = OperationContext(
                principal: issuer, requestID: "narrow", sourceIP: nil, policies: env.policies)
            let (token, _) = try await env.database.run(
                CreateToken(operatorID: admin, name: "inherits", expiresInHours: nil), context: context)
            #expect(token.scopes == ["clients:write", "orders:read", "tokens:write"], "the issuer's, within the role")
            #expect(token.allowedAddresses == ["10.1.0.0/16"], "the issuer's networks")
            let inside = try await env.database.run(
                CreateToken(
                    operatorID: admin, name: "inside", expiresInHours: nil, scopes: ["orders:read"],
                    allowedAddresses: ["10.1.2.0/24"]), context: context)
            #expect(inside.0.allowedAddresses == ["10.1.2.0/24"])
            let broader: [(String, () async throws -> Void)] = [
                (
                    "a scope the issuer lacks",
                    {
                        _ = try await env.database.run(
                            CreateToken(operatorID: admin, name: "x", expiresInHours: nil, scopes: ["goods:write"]),
                            context: context)
                    }
                ),
                (
                    "a wider network",
                    {
                        _ = try await env.database.run(
                            CreateToken(
                                operatorID: admin, name: "x", expiresInHours: nil, allowedAddresses: ["10.0.0.0/8"]),
                            context: context)
                    }
                ),
                (
                    "a client with a scope the issuer lacks",
                    {
                        _ = try await env.database.run(
                            RegisterOAuthClient(
                                name: "x", role: .partnerStaff, tenantID: nil, scopes: ["goods:read"],
                                allowedAddresses: nil), context: context)
                    }
                ),
            ]
            for (what, attempt) in broader {
                do {
                    try await attempt()
                    Issue.record("\(what) was granted")
                } catch DomainError.invalid(let issues) {
                    #expect(issues.contains { $0.code == "beyond_credential" }, "\(what): \(issues)")
                }
            }
            let (client, _) = try await env.database.run(
                RegisterOAuthClient(
                    name: "bounded", role: .partnerStaff, tenantID: nil, scopes: ["orders:read"],
                    allowedAddresses: nil), context: context)
            #expect(client.allowedAddresses == ["10.1.0.0/16"], "a client inherits the issuer's networks")
        }
    }

    /// A token for `operatorID` through the real operation, narrowed as given.
    static func token(
        _ env: TestEnvironment, for operatorID: UUID, scopes: [String]? = nil, allowedAddresses: [String]? = nil
    ) async throws -> String {
        let (_, secret) = try await env.database.runAsSystem(
            CreateToken(
                operatorID: operatorID, name: "scoped", expiresInHours: nil, scopes: scopes,
                allowedAddresses: allowedAddresses),
            context: .system("scope-test", policies: env.policies))
        return secret.value
    }

    /// `GET path` by a Python client whose socket is bound to `from`: "status body".
    static func get(_ path: String, port: Int, token: String, from source: String) async throws -> String {
        let script = """
            import http.client, sys
            c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=20, source_address=(sys.argv[2], 0))
            c.request("GET", sys.argv[3], headers={"Authorization": "Bearer " + sys.argv[4]})
            r = c.getresponse()
            print(r.status, r.read().decode())
            """
        let argv = ["/usr/bin/env", "python3", "-c", script, "\(port)", source, path, token]
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {  // off the cooperative pool: the server answers meanwhile
                continuation.resume(with: Result { try ChildProcess.run(argv).output })
            }
        }
    }
}
