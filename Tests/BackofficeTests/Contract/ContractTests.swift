import Backoffice
import Foundation
import HTTPTypes
import Testing
import Yams

/// One operation of `openapi.yaml`, as the contract tests read it.
struct ContractOperation: CustomStringConvertible, @unchecked Sendable {  // immutable, parsed once
    let id: String
    let method: HTTPRequest.Method
    let path: String
    /// The policy action (`x-action`), nil when the contract forgot it.
    let action: String?
    let isPublic: Bool
    let pathParameters: [String]
    /// The header parameters the operation requires, each with a sample value (a fresh Idempotency-Key per call).
    let requiredHeaders: [String]
    let bodySchema: [String: Any]?
    let successCodes: Set<Int>

    var description: String { "\(id) (\(method) \(path))" }

    /// A sample of each required header: what a well-formed call sends.
    var headers: [String: String] {
        Dictionary(uniqueKeysWithValues: requiredHeaders.map { ($0, $0 == "Idempotency-Key" ? UUID().uuidString : "sample") })
    }
}

/// The contract, parsed once: every operation with what it needs to be called.
struct Contract: @unchecked Sendable {  // immutable, parsed once
    let operations: [ContractOperation]
    let document: [String: Any]

    static func load() throws -> Contract {
        let text = try String(contentsOf: projectRoot.appendingPathComponent("Sources/BackofficeAPI/openapi.yaml"), encoding: .utf8)
        let document = try #require(try Yams.load(yaml: text) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: Any])
        var operations: [ContractOperation] = []
        for (path, item) in paths.sorted(by: { $0.key < $1.key }) {
            for (method, raw) in (item as? [String: Any] ?? [:]).sorted(by: { $0.key < $1.key }) {
                guard let operation = raw as? [String: Any], let httpMethod = HTTPRequest.Method(method.uppercased()) else { continue }
                let parameters = (operation["parameters"] as? [Any] ?? []).compactMap { resolve($0, in: document) }
                let body = ((operation["requestBody"] as? [String: Any])?["content"] as? [String: Any])?["application/json"] as? [String: Any]
                let responses = operation["responses"] as? [String: Any] ?? [:]
                operations.append(
                    ContractOperation(
                        id: operation["operationId"] as? String ?? "?", method: httpMethod, path: path, action: operation["x-action"] as? String,
                        isPublic: operation["x-public"] as? Bool ?? false,
                        pathParameters: parameters.filter { $0["in"] as? String == "path" }.compactMap { $0["name"] as? String },
                        requiredHeaders: parameters.filter { $0["in"] as? String == "header" && $0["required"] as? Bool == true }.compactMap {
                            $0["name"] as? String
                        },
                        bodySchema: body.flatMap { resolve($0["schema"] as Any, in: document) },
                        successCodes: Set(responses.keys.compactMap(Int.init).filter { $0 < 400 })))
            }
        }
        return Contract(operations: operations, document: document)
    }

    /// The `operationId:` lines of `openapi.yaml`, counted in its text: what the parsed operations
    /// and the operations called must both number.
    static var operationCount: Int {
        let text = (try? String(contentsOf: projectRoot.appendingPathComponent("Sources/BackofficeAPI/openapi.yaml"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("operationId:") }.count
    }

    /// Every response property marked `x-pii: true`, as `Schema.path.to.field`.
    var personalFields: Set<String> {
        let schemas = (document["components"] as? [String: Any])?["schemas"] as? [String: Any] ?? [:]
        var found: Set<String> = []
        func walk(_ node: [String: Any], _ path: String) {
            if node["x-pii"] as? Bool == true { found.insert(path) }
            for (name, property) in node["properties"] as? [String: Any] ?? [:] {
                if let property = property as? [String: Any] { walk(property, path + "." + name) }
            }
        }
        for (name, schema) in schemas { if let schema = schema as? [String: Any] { walk(schema, name) } }
        return found
    }

    /// The schema a GET answers 200 with, by name, and whether it is a page of them (`items`).
    func answer(of operation: ContractOperation) -> (String, Bool)? {
        let paths = document["paths"] as? [String: Any]
        let get = (paths?[operation.path] as? [String: Any])?[operation.method.rawValue.lowercased()] as? [String: Any]
        guard let ok = (get?["responses"] as? [String: Any])?["200"], let response = Self.resolve(ok, in: document),
            let schema = ((response["content"] as? [String: Any])?["application/json"] as? [String: Any])?["schema"] as? [String: Any],
            let ref = schema["$ref"] as? String
        else { return nil }
        let name = String(ref.split(separator: "/").last ?? "")
        let page = Self.resolve(schema, in: document)
        if let items = ((page?["properties"] as? [String: Any])?["items"] as? [String: Any])?["items"] as? [String: Any],
            let itemRef = items["$ref"] as? String
        {
            return (String(itemRef.split(separator: "/").last ?? ""), true)
        }
        return (name, false)
    }

    /// Follows a `$ref` within the document.
    static func resolve(_ value: Any, in document: [String: Any]) -> [String: Any]? {
        guard let map = value as? [String: Any] else { return nil }
        guard let ref = map["$ref"] as? String else { return map }
        var node: Any = document
        for part in ref.dropFirst(2).split(separator: "/") { node = (node as? [String: Any])?[String(part)] as Any }
        return resolve(node, in: document)
    }

    /// A body that satisfies `schema`'s shape: every property with a plausible value; uuids
    /// named like a path parameter get that fixture's id.
    func sampleBody(_ schema: [String: Any], ids: [String: String]) -> Any {
        switch schema["type"] as? String {
        case "object":
            var object: [String: Any] = [:]
            let properties = schema["properties"] as? [String: Any] ?? [:]
            for name in properties.keys {
                guard let property = Self.resolve(properties[name] as Any, in: document) else { continue }
                object[name] = ids[name] ?? sampleBody(property, ids: ids)
            }
            return object
        case "array": return [Any]()
        case "boolean": return true
        case "integer": return schema["minimum"] as? Int ?? 1
        case "number": return schema["minimum"] as? Double ?? 1
        default:
            if let values = schema["enum"] as? [Any], let first = values.first { return first }
            switch schema["format"] as? String {
            case "uuid": return UUID().uuidString.lowercased()
            case "email": return "contract-\(UUID().uuidString.prefix(8).lowercased())@example.com"
            case "date-time": return "2099-01-01T00:00:00Z"
            default: return "contract-test"
            }
        }
    }
}

/// Tests generated from the contract: every operation in `openapi.yaml` is checked without anyone
/// writing a test for it, so a new endpoint is covered the day it is added (and the suite fails
/// when it cannot be: no `x-action`, or a path parameter without a fixture).
@Suite("Contract: every operation of openapi.yaml")
struct ContractTests {
    @Test("every operation names its policy action, the policy grants each action to some role, and grants nothing undeclared")
    func actionsAreDeclared() throws {
        let contract = try Contract.load()
        #expect(contract.operations.count == Contract.operationCount, "every operationId of openapi.yaml was parsed")
        for operation in contract.operations where !operation.isPublic {
            #expect(operation.action.flatMap(Action.init(rawValue:)) != nil, "\(operation) needs `x-action:` naming its policy action")
        }
        let declared = Set(contract.operations.compactMap { $0.action.flatMap(Action.init(rawValue:)) })
        #expect(declared == Set(Action.allCases))
        let policies = try TestEnvironment.loadPolicies()
        let publicActions = Set(contract.operations.filter(\.isPublic).compactMap { $0.action.flatMap(Action.init(rawValue:)) })
        #expect(publicActions == policies.access.publicActions, "access.yaml's public: grants exactly the contract's x-public operations")
        for action in declared {
            #expect(Role.allCases.contains { policies.access.allows($0.rawValue, action) }, "no role of access.yaml is granted '\(action)'")
        }
        #expect(throws: PolicyError.self, "access.yaml may not grant an action the contract does not declare") {
            try PolicySet.parse(
                PolicySet.fileNames.reduce(into: [:]) { texts, name in
                    texts[name] = (try? String(contentsOf: projectRoot.appendingPathComponent("policies/\(name)"), encoding: .utf8)) ?? ""
                }.merging(["access.yaml": "roles:\n  auditor:\n    scope: platform\n    allow: [shops.teleport]\n"]) { $1 })
        }
    }

    @Test("every operation, called: no token → 401; a role the policy denies → 403; a role it allows → its documented success, or the precise refusal the fixture's state calls for")
    func authenticationAndPolicy() async throws {
        let contract = try Contract.load()
        try await TestEnvironment.with { env in
            let ids = try await ContractFixture.make(env)
            let partner = env.fixture.partners[0]
            let tokens: [(Role, String)] = [
                (.platformAdmin, env.fixture.tokens[.platformAdmin]!), (.backendManager, env.fixture.tokens[.backendManager]!),
                (.auditor, env.fixture.tokens[.auditor]!), (.appService, env.fixture.tokens[.appService]!),
                (.partnerAdmin, partner.adminToken), (.partnerStaff, partner.staffToken),
            ]
            let answered = try await env.withApp(policies: try ContractFixture.policiesWithoutAuthenticationLimit()) { client in
                var answered: Set<String> = []
                for operation in contract.operations {
                    let path = try ContractFixture.fill(operation, ids: ids.partnerA)
                    let body = try operation.bodySchema.map { try JSONSerialization.data(withJSONObject: contract.sampleBody($0, ids: ids.partnerA)) }
                    let json = body.map { String(decoding: $0, as: UTF8.self) }
                    let anonymous = try await client.call(operation.method, path, token: nil, json: json, headers: operation.headers)
                    if operation.isPublic {
                        // No token needed: a documented success or a problem+json 4xx, never 5xx (a token sent is ignored).
                        let said = "anonymous → \(operation): \(anonymous.status) \(anonymous.text.prefix(300))"
                        #expect(anonymous.status < 500, "never 5xx: \(said)")
                        #expect(
                            anonymous.status >= 400
                                ? anonymous.headers[.contentType] == "application/problem+json" : operation.successCodes.contains(anonymous.status),
                            "\(said)")
                        answered.insert(operation.id)
                        continue
                    }
                    #expect(anonymous.status == 401, "\(operation) without a token → \(anonymous.status)")
                    #expect(anonymous.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
                    guard let action = operation.action.flatMap(Action.init(rawValue:)) else { continue }
                    for (role, token) in tokens {
                        let reply = try await client.call(operation.method, path, token: token, json: json, headers: operation.headers)
                        let said = "\(role.rawValue) → \(operation): \(reply.status) \(reply.text.prefix(300))"
                        if env.policies.access.allows(role.rawValue, action) {
                            if let refusal = ContractOutcomes.refusal(operation.id, role) {
                                #expect(reply.status == refusal.status && reply["code"] == refusal.code, "the expected refusal \(refusal): \(said)")
                                #expect(reply.headers[.contentType] == "application/problem+json", "a problem: \(said)")
                            } else {
                                #expect(operation.successCodes.contains(reply.status), "a documented success: \(said)")
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
            #expect(answered.count == Contract.operationCount, "every operationId of openapi.yaml")
        }
    }

    @Test("every response field the contract marks x-pii is masked for the auditor (pii: masked) and shown whole to the platform admin")
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
                    guard let action = operation.action.flatMap(Action.init(rawValue:)), env.policies.access.allows(Role.auditor.rawValue, action),
                        let (schema, isPage) = contract.answer(of: operation)
                    else { continue }
                    let fields = marked.filter { $0.hasPrefix(schema + ".") }
                    guard !fields.isEmpty else { continue }
                    let path = try ContractFixture.fill(operation, ids: ids.partnerA)
                    let (whole, masked) = (try await client.call(.get, path, token: admin), try await client.call(.get, path, token: auditor))
                    #expect(whole.status == 200 && masked.status == 200, "\(operation): \(whole.status) \(masked.status) \(masked.text.prefix(200))")
                    let items = { (reply: Reply) in isPage ? reply.json["items"] as? [[String: Any]] ?? [] : [reply.json] }
                    for (shown, seen) in zip(items(whole), items(masked)) {
                        for field in fields {
                            let keys = field.split(separator: ".").dropFirst().map(String.init)
                            guard let value = Self.value(shown, keys) as? String, value.count > 1 else { continue }
                            let maskedValue = Self.value(seen, keys) as? String
                            #expect(maskedValue != value && maskedValue?.contains("***") == true, "\(operation) \(field): \(maskedValue ?? "absent")")
                            checked.insert(field)
                        }
                    }
                }
                return checked
            }
            #expect(checked == marked, "every x-pii field was answered, masked, somewhere; not seen: \(marked.subtracting(checked).sorted())")
        }
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
                    let token = env.policies.access.allows(Role.partnerAdmin.rawValue, action) ? other.adminToken : other.staffToken
                    let path = try ContractFixture.fill(operation, ids: ids.partnerA)
                    let body = try operation.bodySchema.map { try JSONSerialization.data(withJSONObject: contract.sampleBody($0, ids: ids.partnerA)) }
                    let reply = try await client.call(
                        operation.method, path, token: token, json: body.map { String(decoding: $0, as: UTF8.self) }, headers: operation.headers)
                    let said = "\(operation) with tenant B's token on tenant A's ids: \(reply.status) \(reply.text.prefix(300))"
                    #expect(reply.status < 500, "\(said)")
                    if !operation.pathParameters.isEmpty {
                        #expect(reply.status == 404, "\(said)")
                    } else if operation.method == .get, reply.status == 200 {
                        if reply.headers[.contentType]?.hasPrefix("application/json") == true {
                            let items = reply.json["items"] as? [[String: Any]] ?? []
                            let foreign = items.filter { ($0["tenant_id"] as? String) == ids.partnerA["tenant_id"] }
                            #expect(foreign.isEmpty, "\(said)")
                        }
                        #expect(!reply.text.contains(ids.partnerA["tenant_id"] ?? "-"), "tenant A's id appears nowhere: \(said)")
                        #expect(!reply.text.contains(ContractFixture.partnerASKU), "tenant A's good appears nowhere (files too): \(said)")
                    } else {
                        #expect(reply.status != 200 || !reply.text.contains(ids.partnerA["tenant_id"] ?? "-"), "\(said)")
                    }
                }
            }
        }
    }
}

extension ContractTests {
    @Test("hostile bodies on every operation that takes one: a clear 4xx problem and nothing changed; SQL metacharacters are data")
    func hostileBodies() async throws {
        let contract = try Contract.load()
        try await TestEnvironment.with { env in
            let ids = try await ContractFixture.make(env)
            let admin = env.fixture.tokens[.platformAdmin]!
            let app = env.fixture.tokens[.appService]!
            try await env.withApp { client in
                for operation in contract.operations {
                    guard let schema = operation.bodySchema, let action = operation.action.flatMap(Action.init(rawValue:)) else { continue }
                    let token = env.policies.access.allows(Role.platformAdmin.rawValue, action) ? admin : app
                    let path = try ContractFixture.fill(operation, ids: ids.partnerA)
                    var sample = contract.sampleBody(schema, ids: ids.partnerA) as? [String: Any] ?? [:]
                    sample["no_such_field"] = "x"
                    let unknownField = try JSONSerialization.data(withJSONObject: sample)
                    let settings = ServerSettings(host: "", port: 0, databaseURL: env.appURL, policiesDirectory: URL(fileURLWithPath: "."))
                    let limit = settings.bulkPaths.contains(path) ? settings.maxBulkBodySize : settings.maxBodySize
                    let hostile: [(String, [UInt8], Int)] = [
                        ("an unknown field", Array(unknownField), 400),
                        ("deeply nested JSON", Array(String(repeating: "[", count: 100_000).utf8), 400),
                        ("invalid UTF-8", [0x7B, 0x22, 0xC3, 0x28, 0x22, 0x3A, 0x31, 0x7D], 400),
                        ("an oversized body", Array(#"{"reason":""#.utf8) + [UInt8](repeating: 0x61, count: limit + 1) + Array(#""}"#.utf8), 413),
                    ]
                    for (what, bytes, expected) in hostile {
                        let before = try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self)
                        let reply = try await client.send(operation.method, path, token: token, bytes: bytes, headers: operation.headers)
                        let said = "\(operation) with \(what): \(reply.status) \(reply.text.prefix(200))"
                        #expect(reply.status == expected, "\(said)")
                        #expect(reply.headers[.contentType] == "application/problem+json", "\(said)")
                        #expect(try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) == before, "nothing changed: \(said)")
                    }
                    // Every string field carrying SQL: stored or refused as data, never executed, never a 5xx.
                    let injected = Self.replacingStrings(in: contract.sampleBody(schema, ids: [:]), with: "x'); DROP TABLE customers; --")
                    let reply = try await client.send(
                        operation.method, path, token: token, bytes: Array(try JSONSerialization.data(withJSONObject: injected)),
                        headers: operation.headers)
                    #expect(reply.status < 500, "\(operation) with SQL in every string: \(reply.status) \(reply.text.prefix(200))")
                }
            }
            #expect(try await env.ownerScalar("SELECT count(*) FROM customers", as: Int.self) ?? 0 > 0, "the customers table is still there")
        }
    }

    static func replacingStrings(in value: Any, with text: String) -> Any {
        switch value {
        case let object as [String: Any]: object.mapValues { replacingStrings(in: $0, with: text) }
        case let array as [Any]: array.map { replacingStrings(in: $0, with: text) }
        case is String: text
        default: value
        }
    }
}

/// The resources the contract tests call operations on.
enum ContractFixture {
    /// The sku of partner A's good: no other tenant may see it anywhere, also in exported files.
    static let partnerASKU = "CONTRACT-A-1"

    struct IDs {
        /// Path parameter name → an id of a resource of partner A (or of the platform, for platform resources).
        var partnerA: [String: String]
    }

    static func make(_ env: TestEnvironment) async throws -> IDs {
        let partner = env.fixture.partners[0]
        let context = Database.systemContext("contract", policies: env.policies)
        let customer = try await env.customer()
        let locked = try await env.customer()
        _ = try await env.database.run(LockAccount(customerID: locked.id, reason: "for appeals"), context: env.context(.backendManager))
        let appeal = try await env.database.run(FileAppeal(customerID: locked.id, message: "please"), context: env.context(.appService))
        let staff = try await env.database.runAsSystem(
            CreateOperator(email: "contract@\(partner.slug).example", role: .partnerStaff, tenantID: partner.tenantID), context: context)
        let (token, _) = try await env.database.runAsSystem(CreateToken(operatorID: staff.id, name: "contract", expiresInHours: 1), context: context)
        let message = try await env.database.run(
            CreateMessage(title: "Contract", body: "A draft for the contract tests", severity: .info), context: env.context(.backendManager))
        let policy = try await env.database.run(
            PublishContentPolicy(slug: "contract-policy", title: "Contract", body: "Be kind."), context: env.context(.backendManager)
        ).0
        let application = try await env.database.runStaged(
            ApplyForShop(
                ShopApplicationForm(
                    legalName: "Contract Shop", contactEmail: "shop@contract.example", taxID: "12-3456789",
                    address: ShopAddress(line1: "1 Main St", line2: "Suite 200", city: "Austin", region: "TX", postalCode: "73301", country: "US"),
                    bankAccount: BankAccount(
                        holderName: "Contract Shop", routingNumber: "110000000", accountNumber: SimulatedPaymentGateway.verifiedAccount)),
                payments: SimulatedPaymentGateway()),
            context: OperationContext(principal: .anonymous, requestID: "contract", sourceIP: nil, policies: env.policies))
        let good = try await env.database.run(
            CreateGood(
                sku: partnerASKU,
                fields: GoodFields(
                    name: "Contract good", description: nil, category: "contract", priceCents: 100, priceFitPoints: nil, stock: 5, imageURLs: nil)),
            context: OperationContext(principal: partner.admin, requestID: "contract", sourceIP: nil, policies: env.policies))
        let shop = try await ShopFixture.make(env)
        let order = try await env.database.runStaged(
            Checkout(
                CheckoutRequest(
                    customerID: shop.customer.id, lines: [.init(goodID: shop.goods["BOTTLE"]!, quantity: 1, payIn: .usd, expectedUnitPrice: 2_500)],
                    shipping: Order.Shipping(
                        name: "Contract",
                        address: ShopAddress(line1: "1 Main St", line2: "Suite 200", city: "Austin", region: "TX", postalCode: "73301", country: "US")
                    ),
                    paymentMethod: SimulatedPaymentGateway.approvedCard), payments: SimulatedPaymentGateway(), idempotencyKey: nil),
            context: env.context(.appService))
        let now = env.clock.now()
        let challenge = try await env.database.run(
            CreateChallenge(
                .init(
                    name: "Contract", metric: "steps", aggregation: "sum", startsAt: now, endsAt: now.addingTimeInterval(86_400),
                    rankBands: [(1, 1, 10, nil)], budgetPoints: 10)), context: env.context(.backendManager))
        return IDs(partnerA: [
            "tenant_id": partner.tenantID.uuidString.lowercased(), "operator_id": staff.id.uuidString.lowercased(),
            "token_id": token.id.uuidString.lowercased(), "customer_id": customer.id.uuidString.lowercased(),
            "appeal_id": appeal.id.uuidString.lowercased(), "message_id": message.id.uuidString.lowercased(),
            "policy_slug": policy.slug, "challenge_id": challenge.id.uuidString.lowercased(),
            "application_id": application.id.uuidString.lowercased(), "good_id": good.id.uuidString.lowercased(),
            "order_id": order.detail.order.id.uuidString.lowercased(), "provider": "simulated",
        ])
    }

    /// The operation's path with every `{parameter}` replaced by a fixture id.
    static func fill(_ operation: ContractOperation, ids: [String: String]) throws -> String {
        var path = operation.path
        for name in operation.pathParameters {
            let id = try #require(ids[name], "\(operation): no fixture for path parameter {\(name)}: add one to ContractFixture.make")
            path = path.replacingOccurrences(of: "{\(name)}", with: id)
        }
        return path
    }

    /// The shipped policies with failed authentications unlimited (the tests send many on purpose).
    static func policiesWithoutAuthenticationLimit() throws -> PolicySet {
        var texts: [String: String] = [:]
        for name in PolicySet.fileNames {
            texts[name] = try String(contentsOf: projectRoot.appendingPathComponent("policies/\(name)"), encoding: .utf8)
        }
        texts["security.yaml"] = texts["security.yaml"]?.replacingOccurrences(
            of: "max_failures_per_address: 20", with: "max_failures_per_address: 100000"
        ).replacingOccurrences(of: "max_per_address: 10", with: "max_per_address: 100000")
        return try PolicySet.parse(texts)
    }
}
