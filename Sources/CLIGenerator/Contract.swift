import Foundation
import Yams

/// A YAML mapping with its keys in the document's order (a Swift initializer's labels follow the
/// order the contract declares properties and parameters in).
struct Mapping {
    let pairs: [(key: String, value: Any)]

    subscript(key: String) -> Any? { pairs.first { $0.key == key }?.value }
    var keys: [String] { pairs.map(\.key) }
    func mapping(_ key: String) -> Mapping? { self[key] as? Mapping }
    func text(_ key: String) -> String? { self[key] as? String }
    func list(_ key: String) -> [Any] { self[key] as? [Any] ?? [] }
    func texts(_ key: String) -> [String] {
        if let one = self[key] as? String { return [one] }
        return list(key).compactMap { $0 as? String }
    }

    /// A node as plain values: mappings in order, sequences as arrays, scalars as their text.
    static func value(_ node: Node) -> Any {
        switch node {
        case .scalar(let scalar): return scalar.string
        case .sequence(let sequence): return sequence.map(value)
        case .mapping(let mapping):
            return Mapping(pairs: mapping.map { (key: $0.key.string ?? "", value: value($0.value)) })
        case .alias: return ""
        }
    }
}

/// The contract as the generator reads it: `openapi.yaml` in document order, with `$ref`s resolved on
/// demand. Only what the CLI's commands need is read.
struct Contract {
    let document: Mapping

    init(path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        guard let node = try Yams.compose(yaml: text), let document = Mapping.value(node) as? Mapping else {
            throw GeneratorError("\(path) is not a YAML mapping")
        }
        self.document = document
    }

    /// The named column sets (`x-cli-columns`): the fields a table shows of each resource.
    var columnSets: [(name: String, columns: [String])] {
        let sets = document.mapping("x-cli-columns")
        return (sets?.keys ?? []).map { ($0, sets?.texts($0) ?? []) }
    }

    /// The command groups (`x-cli-groups`), by their Swift type's path (`Accounts.Appeals`).
    var groups: [(path: String, group: Mapping)] {
        (document.mapping("x-cli-groups")?.pairs ?? []).compactMap { pair in
            (pair.value as? Mapping).map { (pair.key, $0) }
        }
    }

    /// Every operation that names its command (`x-cli`), in the document's order.
    var commandOperations: [Operation] {
        let paths = document.mapping("paths")?.pairs ?? []
        return paths.flatMap { path -> [Operation] in
            (path.value as? Mapping)?.pairs.compactMap { method in
                guard let raw = method.value as? Mapping, raw.mapping("x-cli") != nil else { return nil }
                return Operation(raw: raw, contract: self)
            } ?? []
        }
    }

    /// `value` itself, or the mapping its `$ref` points at (`#/components/…`).
    func resolved(_ value: Any?) -> Mapping? {
        guard let mapping = value as? Mapping else { return nil }
        guard let reference = mapping.text("$ref") else { return mapping }
        var node: Any? = document
        for part in reference.dropFirst(2).split(separator: "/") { node = (node as? Mapping)?[String(part)] }
        return node as? Mapping
    }

    /// The schema's name when it is a reference to `#/components/schemas/NAME`.
    static func schemaName(_ value: Any?) -> String? {
        let prefix = "#/components/schemas/"
        guard let reference = (value as? Mapping)?.text("$ref"), reference.hasPrefix(prefix) else { return nil }
        return String(reference.dropFirst(prefix.count))
    }

    /// The named schemas that are string enumerations: each is a value an option accepts.
    var enumerationSchemas: [String] {
        let schemas = document.mapping("components")?.mapping("schemas")
        return (schemas?.pairs ?? []).filter { ($0.value as? Mapping)?["enum"] != nil }.map(\.key)
    }
}

/// One operation of the contract with its `x-cli` block.
struct Operation {
    let raw: Mapping
    let contract: Contract

    var id: String { raw.text("operationId") ?? "" }
    var cli: Mapping { raw.mapping("x-cli") ?? Mapping(pairs: []) }
    var parameters: [(reference: String?, parameter: Mapping)] {
        raw.list("parameters").compactMap { item in
            contract.resolved(item).map { ((item as? Mapping)?.text("$ref"), $0) }
        }
    }

    /// The JSON request body's schema (resolved) and its name when it is a named schema.
    var body: (schema: Mapping, name: String?)? {
        guard let json = raw.mapping("requestBody")?.mapping("content")?.mapping("application/json"),
            let schema = contract.resolved(json["schema"])
        else { return nil }
        return (schema, Contract.schemaName(json["schema"]))
    }
}

/// A contract the generator cannot turn into commands: the message names the operation and field.
struct GeneratorError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
