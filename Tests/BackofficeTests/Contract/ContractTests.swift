import Foundation
import HTTPTypes
import Testing
import Yams

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// Tests generated from the contract: every operation in `openapi.yaml` is checked without anyone
/// writing a test for it, so a new endpoint is covered the day it is added (and the suite fails
/// when it cannot be: no `x-action`, or a path parameter without a fixture).
@Suite("Contract: every operation of openapi.yaml")
struct ContractTests {
    @Test(
        """
        every operation names its policy action, the policy grants each action to some role, and grants nothing \
        undeclared
        """
    )
    func actionsAreDeclared() throws {
        let contract = try Contract.load()
        #expect(contract.operations.count == contract.operationCount, "every operationId of openapi.yaml was parsed")
        for operation in contract.operations where !operation.isPublic {
            #expect(
                operation.action.flatMap(Action.init(rawValue:)) != nil,
                "\(operation) needs `x-action:` naming its policy action")
        }
        let declared = Set(contract.operations.compactMap { $0.action.flatMap(Action.init(rawValue:)) })
        #expect(
            declared.union(Action.sessionEvents) == Set(Action.allCases),
            "the contract's actions and the console's sign-in events")
        #expect(declared.isDisjoint(with: Action.sessionEvents))
        let policies = try TestEnvironment.loadPolicies()
        let publicActions = Set(
            contract.operations.filter(\.isPublic).compactMap { $0.action.flatMap(Action.init(rawValue:)) })
        #expect(
            publicActions == policies.access.publicActions,
            "access.yaml's public: grants exactly the contract's x-public operations")
        for action in declared {
            #expect(
                Role.allCases.contains { policies.access.allows($0.rawValue, action) },
                "no role of access.yaml is granted '\(action)'")
        }
        #expect(throws: PolicyError.self, "access.yaml may not grant an action the contract does not declare") {
            try PolicySet.parse(
                try PolicySet.texts(in: projectRoot.appendingPathComponent("policies")).merging([
                    "access.yaml": "roles:\n  auditor:\n    scope: platform\n    allow: [shops.teleport]\n"
                ]) {
                    $1
                })
        }
    }

    @Test(
        """
        every operation, called: no token → 401; a role the policy denies → 403; a role it allows → its \
        documented success, or the precise refusal the fixture's state calls for
        """
    )
    func authenticationAndPolicy() async throws {
        let contract = try Contract.load()
        try await TestEnvironment.with { env in
            let ids = try await ContractFixture.make(env)
            let partner = env.fixture.partners[0]
            let tokens: [(Role, String)] = [
                (.platformAdmin, env.fixture.tokens[.platformAdmin]!),
                (.backendManager, env.fixture.tokens[.backendManager]!),
                (.auditor, env.fixture.tokens[.auditor]!), (.appService, env.fixture.tokens[.appService]!),
                (.partnerAdmin, partner.adminToken), (.partnerStaff, partner.staffToken),
                (.expert, env.fixture.tokens[.expert]!),
            ]
            let answered = try await env.withApp(policies: try ContractFixture.policiesWithoutAuthenticationLimit()) {
                client in
                var answered: Set<String> = []
                for operation in contract.operations {
                    let path = try ContractFixture.fill(operation, ids: ids.partnerA)
                    let body = try operation.bodySchema.map {
                        try JSONSerialization.data(withJSONObject: contract.sampleBody($0, ids: ids.partnerA))
                    }
                    let json = body.map { String(decoding: $0, as: UTF8.self) }
                    let anonymous = try await client.call(
                        operation.method, path, token: nil, json: json, headers: operation.headers)
                    if operation.isPublic {
                        // No token needed: a documented success or a problem+json 4xx, never 5xx (a token sent is
                        // ignored).
                        let said = "anonymous → \(operation): \(anonymous.status) \(anonymous.text.prefix(300))"
                        #expect(anonymous.status < 500, "never 5xx: \(said)")
                        #expect(
                            anonymous.status >= 400
                                ? anonymous.headers[.contentType] == "application/problem+json"
                                : operation.successCodes.contains(anonymous.status),
                            "\(said)")
                        answered.insert(operation.id)
                        continue
                    }
                    #expect(anonymous.status == 401, "\(operation) without a token → \(anonymous.status)")
                    #expect(anonymous.headers[HTTPField.Name("X-Request-Id")!] != nil, "\(operation): X-Request-Id")
                    #expect(anonymous.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
                    guard let action = operation.action.flatMap(Action.init(rawValue:)) else { continue }
                    for (role, token) in tokens {
                        let reply = try await client.call(
                            operation.method, path, token: token, json: json, headers: operation.headers)
                        let said = "\(role.rawValue) → \(operation): \(reply.status) \(reply.text.prefix(300))"
                        if env.policies.access.allows(role.rawValue, action) {
                            if let refusal = ContractOutcomes.refusal(operation.id, role) {
                                #expect(
                                    reply.status == refusal.status && reply["code"] == refusal.code,
                                    "the expected refusal \(refusal): \(said)")
                                #expect(reply.headers[.contentType] == "application/problem+json", "a problem: \(said)")
                            } else {
                                #expect(operation.successCodes.contains(reply.status), "a documented success: \(said)")
                                let upper = Self.upperCaseIDs(reply.text)
                                #expect(upper.isEmpty, "every id in lower case (\(upper)): \(said)")
                            }
                            answered.insert(operation.id)
                        } else {
                            #expect(reply.status == 403, "denied: \(said)")
                            #expect(reply["code"] == "forbidden", "denied: \(said)")
                            #expect(reply.headers[.contentType] == "application/problem+json")
                        }
                    }
                }
                return answered
            }
            #expect(answered == Set(contract.operations.map(\.id)), "every operation answered an allowed caller")
            #expect(answered.count == contract.operationCount, "every operationId of openapi.yaml")
        }
    }

    @Test(
        """
        the contract as a generated client reads it: bearer tokens are a declared security scheme every operation \
        needs (with its scope) but the public ones (security: []); every answer of every operation declares \
        X-Request-Id
        """
    )
    func securityAndRequestID() throws {
        let contract = try Contract.load()
        let document = contract.document
        let components = document["components"] as? [String: Any] ?? [:]
        let schemes = components["securitySchemes"] as? [String: Any] ?? [:]
        let bearer = schemes["bearerToken"] as? [String: Any]
        #expect(bearer?["type"] as? String == "http" && bearer?["scheme"] as? String == "bearer")
        #expect((document["security"] as? [[String: Any]])?.first?.keys.first == "bearerToken")
        var checked = 0
        for (path, item) in document["paths"] as? [String: Any] ?? [:] {
            for (method, raw) in item as? [String: Any] ?? [:] {
                guard let operation = raw as? [String: Any], let responses = operation["responses"] as? [String: Any]
                else { continue }
                let isPublic = operation["x-public"] as? Bool ?? false
                let security = operation["security"] as? [[String: Any]]
                #expect(
                    isPublic
                        ? security?.isEmpty == true
                        : security?.count == 1 && security?.first?.keys.sorted() == ["bearerToken"],
                    "\(method) \(path): security \(String(describing: security)) for x-public \(isPublic)")
                for (code, response) in responses {
                    let resolved = Contract.resolve(response, in: document) ?? [:]
                    let headers = resolved["headers"] as? [String: Any] ?? [:]
                    #expect(headers["X-Request-Id"] != nil, "\(method) \(path) \(code) declares X-Request-Id")
                    checked += 1
                }
            }
        }
        #expect(checked >= contract.operationCount * 2)
    }

    @Test(
        """
        no key of the contract is left without a value: an unquoted comma in a flow mapping's text cuts the text \
        and makes its rest a key (a description, a help line)
        """
    )
    func noKeyWithoutValue() throws {
        func emptyKeys(_ value: Any, _ path: String) -> [String] {
            if let mapping = value as? [String: Any] {
                return mapping.flatMap { key, inner in
                    inner is NSNull ? ["\(path)/\(key)"] : emptyKeys(inner, "\(path)/\(key)")
                }
            }
            if let list = value as? [Any] { return list.enumerated().flatMap { emptyKeys($1, "\(path)/\($0)") } }
            return []
        }
        let cut = try #require(try Yams.load(yaml: "p: { description: One serving (over 0, at most 5000). }"))
        #expect(emptyKeys(cut, "") == ["/p/at most 5000)."], "the check finds the defect it is for")
        #expect(emptyKeys(try Contract.load().document, "").sorted() == [])
    }

    @Test("every paged operation takes the limit its contract names, and refuses one more (422 on limit)")
    func pageLimits() async throws {
        let contract = try Contract.load()
        let paged = contract.operations.filter { $0.limitMaximum != nil && $0.method == .get }
        #expect(paged.count >= 20, "the contract's paged reads: \(paged.count)")
        try await TestEnvironment.with { env in
            let ids = try await ContractFixture.make(env)
            try await env.withApp { client in
                for operation in paged {
                    let maximum = operation.limitMaximum!
                    let path = try ContractFixture.fill(operation, ids: ids.partnerA)
                    let join = path.contains("?") ? "&" : "?"
                    let token = env.fixture.tokens[operation.isPublic ? .appService : .platformAdmin]!
                    let most = try await client.call(
                        operation.method, "\(path)\(join)limit=\(maximum)", token: token, headers: operation.headers)
                    if ContractOutcomes.refusal(operation.id, .platformAdmin) == nil {
                        #expect(
                            operation.successCodes.contains(most.status),
                            "\(operation) with limit=\(maximum): \(most.status) \(most.text.prefix(200))")
                    }
                    let over = try await client.call(
                        operation.method, "\(path)\(join)limit=\(maximum + 1)", token: token, headers: operation.headers
                    )
                    #expect(
                        over.status == 422 && over.text.contains(#""field":"limit""#),
                        "\(operation) with limit=\(maximum + 1): \(over.status) \(over.text.prefix(200))")
                }
            }
        }
    }

    @Test(
        """
        every response field the contract marks x-pii is masked for the auditor (pii: masked) and shown whole to \
        the platform admin
        """
    )
    func personalDataMasked() async throws {
        let contract = try Contract.load()
        let marked = contract.personalFields
        #expect(marked.count >= 12, "the contract marks the personal fields: \(marked.sorted())")
        try await TestEnvironment.with { env in
            let ids = try await ContractFixture.make(env)
            let (admin, auditor) = (env.fixture.tokens[.platformAdmin]!, env.fixture.tokens[.auditor]!)
            let checked = try await env.withApp { client in
                var checked: Set<String> = []
                for operation in contract.operations where operation.method == .get {
                    guard let action = operation.action.flatMap(Action.init(rawValue:)),
                        env.policies.access.allows(Role.auditor.rawValue, action),
                        let (schema, isPage) = contract.answer(of: operation)
                    else { continue }
                    let fields = marked.filter { $0.hasPrefix(schema + ".") }
                    guard !fields.isEmpty else { continue }
                    let path = try ContractFixture.fill(operation, ids: ids.partnerA)
                    let (whole, masked) = (
                        try await client.call(.get, path, token: admin),
                        try await client.call(.get, path, token: auditor)
                    )
                    #expect(
                        whole.status == 200 && masked.status == 200,
                        "\(operation): \(whole.status) \(masked.status) \(masked.text.prefix(200))")
                    let items = { (reply: Reply) in
                        isPage ? reply.json["items"] as? [[String: Any]] ?? [] : [reply.json]
                    }
                    for (shown, seen) in zip(items(whole), items(masked)) {
                        for field in fields {
                            let keys = field.split(separator: ".").dropFirst().map(String.init)
                            guard let value = Self.value(shown, keys) as? String, value.count > 1 else { continue }
                            let maskedValue = Self.value(seen, keys) as? String
                            #expect(
                                maskedValue != value && maskedValue?.contains("***") == true,
                                "\(operation) \(field): \(maskedValue ?? "absent")")
                            checked.insert(field)
                        }
                    }
                }
                return checked
            }
            #expect(
                checked == marked,
                "every x-pii field was answered, masked, somewhere; not seen: \(marked.subtracting(checked).sorted())")
        }
    }

    /// The UUIDs in `text` written with an upper-case letter (every answer writes ids one way).
    static func upperCaseIDs(_ text: String) -> [String] {
        text.matches(of: /[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}/).map {
            String($0.output)
        }.filter { $0 != $0.lowercased() }
    }

    /// The value at `keys` in a JSON object.
    static func value(_ object: [String: Any], _ keys: [String]) -> Any? {
        var node: Any? = object
        for key in keys { node = (node as? [String: Any])?[key] }
        return node
    }

    @Test("tenant-owned resources: another tenant's token gets 404, and its lists hold none of the first tenant's rows")
    func tenantIsolation() async throws {
        let contract = try Contract.load()
        try await TestEnvironment.with { env in
            let ids = try await ContractFixture.make(env)
            let other = env.fixture.partners[1]
            try await env.withApp { client in
                for operation in contract.operations {
                    guard let action = operation.action.flatMap(Action.init(rawValue:)),
                        env.policies.access.allows(Role.partnerAdmin.rawValue, action)
                            || env.policies.access.allows(Role.partnerStaff.rawValue, action)
                    else { continue }
                    let token =
                        env.policies.access.allows(Role.partnerAdmin.rawValue, action)
                        ? other.adminToken : other.staffToken
                    let path = try ContractFixture.fill(operation, ids: ids.partnerA)
                    let body = try operation.bodySchema.map {
                        try JSONSerialization.data(withJSONObject: contract.sampleBody($0, ids: ids.partnerA))
                    }
                    let reply = try await client.call(
                        operation.method, path, token: token, json: body.map { String(decoding: $0, as: UTF8.self) },
                        headers: operation.headers)
                    let said =
                        """
                        \(operation) with tenant B's token on tenant A's ids: \(reply.status) \
                        \(reply.text.prefix(300))
                        """
                    #expect(reply.status < 500, "\(said)")
                    if !operation.pathParameters.isEmpty {
                        #expect(reply.status == 404, "\(said)")
                    } else if operation.method == .get, reply.status == 200 {
                        if reply.headers[.contentType]?.hasPrefix("application/json") == true {
                            let items = reply.json["items"] as? [[String: Any]] ?? []
                            let foreign = items.filter { ($0["tenant_id"] as? String) == ids.partnerA["tenant_id"] }
                            #expect(foreign.isEmpty, "\(said)")
                        }
                        #expect(
                            !reply.text.contains(ids.partnerA["tenant_id"] ?? "-"),
                            "tenant A's id appears nowhere: \(said)")
                        #expect(
                            !reply.text.contains(ContractFixture.partnerASKU),
                            "tenant A's good appears nowhere (files too): \(said)")
                    } else {
                        #expect(
                            reply.status != 200 || !reply.text.contains(ids.partnerA["tenant_id"] ?? "-"), "\(said)")
                    }
                }
            }
        }
    }
}
