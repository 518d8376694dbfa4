import Foundation
import HTTPTypes
import Testing
import Yams

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

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
    /// The `limit` query parameter's maximum, for a paged operation.
    let limitMaximum: Int?
    /// The scopes its `security` section names (`bearerToken: [scope]`), in order.
    var scopes: [String] = []

    var description: String { "\(id) (\(method) \(path))" }

    /// A sample of each required header: what a well-formed call sends.
    var headers: [String: String] {
        Dictionary(
            uniqueKeysWithValues: requiredHeaders.map { ($0, $0 == "Idempotency-Key" ? UUID().uuidString : "sample") })
    }
}

/// The contract, parsed once: every operation with what it needs to be called.
struct Contract: @unchecked Sendable {  // immutable, parsed once
    let operations: [ContractOperation]
    let document: [String: Any]
    /// The `operationId:` lines of `openapi.yaml`, counted in its text: what the parsed operations
    /// and the operations called must both number.
    let operationCount: Int

    /// The contract, parsed on the first call of the run (the suites that read it share one parse).
    static func load() throws -> Contract { try parsed.get() }
    private static let parsed = Result { try parse() }

    private static func parse() throws -> Contract {
        let text = try String(
            contentsOf: projectRoot.appendingPathComponent("Sources/BackofficeAPI/openapi.yaml"), encoding: .utf8)
        guard let document = try Yams.load(yaml: text) as? [String: Any],
            let paths = document["paths"] as? [String: Any]
        else {
            throw TestSetupError(description: "openapi.yaml has no paths")
        }
        var operations: [ContractOperation] = []
        for (path, item) in paths.sorted(by: { $0.key < $1.key }) {
            for (method, raw) in (item as? [String: Any] ?? [:]).sorted(by: { $0.key < $1.key }) {
                guard let operation = raw as? [String: Any], let httpMethod = HTTPRequest.Method(method.uppercased())
                else { continue }
                let parameters = (operation["parameters"] as? [Any] ?? []).compactMap { resolve($0, in: document) }
                let body =
                    ((operation["requestBody"] as? [String: Any])?["content"] as? [String: Any])?["application/json"]
                    as? [String: Any]
                let responses = operation["responses"] as? [String: Any] ?? [:]
                operations.append(
                    ContractOperation(
                        id: operation["operationId"] as? String ?? "?", method: httpMethod, path: path,
                        action: operation["x-action"] as? String,
                        isPublic: operation["x-public"] as? Bool ?? false,
                        pathParameters: parameters.filter { $0["in"] as? String == "path" }.compactMap {
                            $0["name"] as? String
                        },
                        requiredHeaders: parameters.filter {
                            $0["in"] as? String == "header" && $0["required"] as? Bool == true
                        }.compactMap {
                            $0["name"] as? String
                        },
                        bodySchema: body.flatMap { resolve($0["schema"] as Any, in: document) },
                        successCodes: Set(responses.keys.compactMap(Int.init).filter { $0 < 400 }),
                        limitMaximum: parameters.first {
                            $0["name"] as? String == "limit" && $0["in"] as? String == "query"
                        }
                        .flatMap { ($0["schema"] as? [String: Any])?["maximum"] as? Int },
                        scopes: (operation["security"] as? [[String: [String]]] ?? []).flatMap {
                            $0["bearerToken"] ?? []
                        }))
            }
        }
        let operationCount = text.split(separator: "\n").filter {
            $0.trimmingCharacters(in: .whitespaces).hasPrefix("operationId:")
        }.count
        return Contract(operations: operations, document: document, operationCount: operationCount)
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
            let schema = ((response["content"] as? [String: Any])?["application/json"] as? [String: Any])?["schema"]
                as? [String: Any],
            let ref = schema["$ref"] as? String
        else { return nil }
        let name = String(ref.split(separator: "/").last ?? "")
        let page = Self.resolve(schema, in: document)
        if let items = ((page?["properties"] as? [String: Any])?["items"] as? [String: Any])?["items"]
            as? [String: Any],
            let itemRef = items["$ref"] as? String
        {
            return (String(itemRef.split(separator: "/").last ?? ""), true)
        }
        return (name, false)
    }

    /// Every streamed success the contract declares: each JSON Lines media type of an operation's 200
    /// (its line's schema named by `x-item-schema`), and each other media type that is not JSON but
    /// names a schema (a document streamed under a type of its own). CSV names none and is left out.
    var streams: [ContractStream] {
        let paths = document["paths"] as? [String: Any] ?? [:]
        return operations.flatMap { operation -> [ContractStream] in
            let item = (paths[operation.path] as? [String: Any])?[operation.method.rawValue.lowercased()]
            let ok = ((item as? [String: Any])?["responses"] as? [String: Any])?["200"]
            let content = Self.resolve(ok as Any, in: document)?["content"] as? [String: Any] ?? [:]
            return content.sorted { $0.key < $1.key }.compactMap { type, value in
                let media = value as? [String: Any] ?? [:]
                if ContractStream.linesTypes.contains(type) {
                    let item = (media["x-item-schema"] as? [String: Any])?["$ref"] as? String
                    return ContractStream(
                        operation: operation, mediaType: type, schema: item.map(Self.name), lines: true)
                }
                guard type != "application/json", let ref = (media["schema"] as? [String: Any])?["$ref"] as? String
                else { return nil }
                return ContractStream(operation: operation, mediaType: type, schema: Self.name(ref), lines: false)
            }
        }
    }

    /// The last part of a `$ref`: the schema's name.
    static func name(_ ref: String) -> String { String(ref.split(separator: "/").last ?? "") }

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

/// A streamed success of one operation (`Contract.streams`).
struct ContractStream: CustomStringConvertible {
    /// The media types of JSON Lines.
    static let linesTypes: Set<String> = ["application/jsonl", "application/x-ndjson"]

    let operation: ContractOperation
    let mediaType: String
    /// The schema each line (or the document) is, by name; nil when the contract names none.
    let schema: String?
    let lines: Bool

    var description: String { "\(operation) as \(mediaType)" }
}
