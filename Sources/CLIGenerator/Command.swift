/// One generated command: an operation with an `x-cli` block, as an `AsyncParsableCommand` that
/// takes the operation's parameters and body fields from its command line, makes the one call, and
/// prints the answer through `GlobalOptions.show`.
///
/// The `x-cli` block:
/// - `command`: the Swift type (`Accounts.Lock`); its command name is ArgumentParser's from the
///   type's last part, or `name`;
/// - `abstract`, `discussion`, `example` (one or several);
/// - `columns`: fields, or `$set` for a named set of `x-cli-columns`; `rows`: the key of a list shown
///   with totals beside it; `layout: page`: a list without a cursor shown as a page;
/// - `download: {body, counting}`: a streamed answer written to `--file` (`Transfer.download`);
///   `body: csvOrJsonl`, the answer in the format asked (`--format`), CSV's header not counted;
/// - `arguments`: body or query fields taken as positional arguments; `rename`: a field's option name
///   (`tags: tag`); `help`: a field's help where the contract's description is not the one to show;
/// - `required`: fields the command line requires though the contract does not (so the service can
///   say why); `defaults`: an option's Swift default; `fixed`: a body field given a Swift expression
///   rather than an option; `files`: text fields read from the file an option names (`body` from
///   `--body-file`), with that option's help; `structured_files: {field: Item}`: a list of the
///   schema `Item` read from the YAML or JSON file `--field-file` names; `pairs: {field: [Item, a,
///   b]}`: repeated `--field A:B` whole-number pairs, each an `Item(a:, b:)`;
/// - `current`: the operation that reads the resource, whose ETag is sent as `If-Match` when
///   `--if-match` is absent (so a version saved in between is still refused, never overwritten).
struct Command {
    let typePath: [String]
    let configuration: [String]
    let inputs: [Input]
    let call: String
    let layout: String
    /// A streamed answer written to `--file` (or standard output): the body's case in the client
    /// (`applicationJsonl`) and what its lines count, from `download: {body, counting}`.
    let download: (body: String, counting: String)?

    init(_ operation: Operation) throws {
        let cli = operation.cli
        guard let command = cli.text("command"), let abstract = cli.text("abstract") else {
            throw GeneratorError("\(operation.id): x-cli needs a command and an abstract")
        }
        typePath = command.split(separator: ".").map(String.init)
        let examples = cli.texts("example").map { "Example: \($0)" }
        let discussion = (cli.texts("discussion") + examples).joined(separator: "\n\n")
        configuration =
            (cli.text("name").map { ["commandName: \(SwiftName.literal($0))"] } ?? [])
            + ["abstract: \(SwiftName.literal(abstract))", "discussion: \(SwiftName.literal(discussion))"]
        var reader = InputReader(operation: operation)
        do {
            let groups = try reader.groups()
            inputs = reader.inputs
            let arguments = groups.map { "\($0.label): \($0.value)" }.joined(separator: ", ")
            call = "client.\(operation.id)(\(arguments))"
        } catch let error as GeneratorError {
            throw GeneratorError("\(operation.id): \(error.description)")
        }
        download = cli.mapping("download").map { ($0.text("body") ?? "json", $0.text("counting") ?? "lines") }
        let columns = Self.columns(cli.texts("columns"))
        if let key = cli.text("rows") {
            layout = ".rows(key: \(SwiftName.literal(key)), \(columns))"
        } else if cli.text("layout") == "page"
            || operation.parameters.contains(where: { $0.reference?.hasSuffix("/Cursor") == true })
        {
            layout = ".page(\(columns))"
        } else {
            layout = ".single(\(columns))"
        }
    }

    /// `[$customer, created_at]` → `CLIColumns.customer + ["created_at"]`.
    static func columns(_ names: [String]) -> String {
        var parts: [String] = []
        var loose: [String] = []
        func flush() {
            if !loose.isEmpty { parts.append("[" + loose.map(SwiftName.literal).joined(separator: ", ") + "]") }
            loose = []
        }
        for name in names {
            if name.hasPrefix("$") {
                flush()
                parts.append("CLIColumns.\(SwiftName.member(String(name.dropFirst())))")
            } else {
                loose.append(name)
            }
        }
        flush()
        return parts.isEmpty ? "[]" : parts.joined(separator: " + ")
    }
}

/// Reads an operation's parameters and body into a command's inputs, grouped as the client's input
/// takes them (`path:`, `query:`, `headers:`, `body:`).
struct InputReader {
    let operation: Operation
    private(set) var inputs: [Input] = []
    private var paging = false

    init(operation: Operation) { self.operation = operation }

    private var cli: Mapping { operation.cli }
    private var positional: Set<String> { Set(cli.texts("arguments")) }

    /// A field's help: the `x-cli` block's, else the contract's description of the field or its schema.
    private func help(_ name: String, _ described: Mapping?, _ schema: Any?) -> String {
        if let given = cli.mapping("help")?.text(name) ?? cli.mapping("files")?.text(name) { return given }
        // An enumeration's values are listed by ArgumentParser itself.
        let text = described?.text("description") ?? operation.contract.resolved(schema)?.text("description") ?? ""
        return text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// The client call's argument groups, each `label: .init(…)`.
    mutating func groups() throws -> [(label: String, value: String)] {
        var path: [Input] = []
        var query: [Input] = []
        var headers: [Input] = []
        for (reference, parameter) in operation.parameters {
            guard let name = parameter.text("name"), let place = parameter.text("in") else { continue }
            switch place {
            case "path": path.append(try pathInput(name, parameter))
            case "query": query.append(contentsOf: try queryInputs(name, reference, parameter))
            case "header":
                guard let input = try headerInput(name, required: parameter.text("required") == "true") else {
                    continue
                }
                headers.append(input)
            default: throw GeneratorError("parameter \(name) in \(place)")
            }
        }
        let pathGroup = ".init(" + path.map { "\($0.label): \($0.value)" }.joined(separator: ", ") + ")"
        if let current = cli.text("current"), let index = headers.firstIndex(where: { $0.label == "ifMatch" }) {
            headers[index] = Input(
                declaration: "@Option(help: \"Only if it is still at this ETag/version (read first when absent).\") "
                    + "var ifMatch: String?", label: "ifMatch",
                value: "try await currentVersion(ifMatch, await client.\(current)(path: \(pathGroup)))")
        }
        let body = try bodyGroup()
        inputs =
            path + query.filter { !$0.declaration.isEmpty } + headers.filter { !$0.declaration.isEmpty }
            + body.inputs
        if paging { inputs.append(Input(declaration: pagingDeclaration, label: "page", value: "")) }
        var groups: [(String, String)] = []
        for (label, members) in [("path", path), ("query", query), ("headers", headers)] where !members.isEmpty {
            groups.append((label, ".init(" + members.map { "\($0.label): \($0.value)" }.joined(separator: ", ") + ")"))
        }
        if let value = body.value { groups.append(("body", value)) }
        return groups
    }

    private let pagingDeclaration = "@OptionGroup(title: \"Paging\") var page: PageOptions"

    /// A path parameter, as a positional argument: `order_id` says "Order id.", `policy_slug` "The policy slug.".
    private func pathInput(_ name: String, _ parameter: Mapping) throws -> Input {
        let words = name.split(separator: "_").map(String.init)
        let said =
            words.last == "id"
            ? SwiftName.capitalized(words.dropLast().joined(separator: " ")) + " id."
            : "The " + words.joined(separator: " ") + "."
        let help = cli.mapping("help")?.text(name) ?? said
        return Input(name: name, kind: .text, required: true, positional: true, help: help)
    }

    private mutating func queryInputs(_ name: String, _ reference: String?, _ parameter: Mapping) throws -> [Input] {
        if let reference, reference.hasSuffix("/Limit") || reference.hasSuffix("/Cursor") {
            paging = true
            let label = SwiftName.member(name)
            return [Input(declaration: "", label: label, value: "page.\(label)")]
        }
        let inline = "Operations.\(SwiftName.type(operation.id)).Input.Query.\(SwiftName.type(name))Payload"
        let kind = try ValueKind.of(parameter["schema"], in: operation.contract, inlineEnumeration: inline)
        return [input(name, kind: kind, required: parameter.text("required") == "true", parameter, parameter["schema"])]
    }

    private func input(_ name: String, kind: ValueKind, required: Bool, _ described: Mapping?, _ schema: Any?)
        -> Input
    {
        Input(
            name: name, property: cli.mapping("rename")?.text(name), kind: kind,
            required: required || cli.texts("required").contains(name),
            positional: positional.contains(name), help: help(name, described, schema),
            preset: cli.mapping("defaults")?.text(name))
    }

    /// A header's input; an optional header the command line has no use for (`If-None-Match`) is not sent.
    private func headerInput(_ name: String, required: Bool) throws -> Input? {
        switch name {
        case "Idempotency-Key": return Input(declaration: "", label: "idempotencyKey", value: "global.changeKey()")
        case "If-Match":
            return Input(
                declaration: "@Option(help: \"Only if it is still at this ETag/version.\") var ifMatch: String?",
                label: "ifMatch", value: "ifMatch")
        default:
            if required { throw GeneratorError("header \(name) has no command-line form") }
            return nil
        }
    }

    /// The body's inputs and its `.json(.init(…))`, or no body.
    private func bodyGroup() throws -> (inputs: [Input], value: String?) {
        guard let (schema, schemaName) = operation.body else { return ([], nil) }
        let owner =
            schemaName.map { "Components.Schemas.\(SwiftName.type($0))" }
            ?? "Operations.\(SwiftName.type(operation.id)).Input.Body.JsonPayload"
        let required = Set(schema.texts("required"))
        var inputs: [Input] = []
        var members: [String] = []
        for (name, raw) in schema.mapping("properties")?.pairs ?? [] {
            if let fixed = cli.mapping("fixed")?.text(name) {
                members.append("\(SwiftName.member(name)): \(fixed)")
                continue
            }
            let inline = "\(owner).\(SwiftName.type(name))Payload"
            do {
                let read = cli.mapping("files")?.text(name) != nil
                let pair = cli.mapping("pairs")?.texts(name) ?? []
                let structured = cli.mapping("structured_files")?.text(name)
                let kind: ValueKind =
                    if read { .file } else if let structured { .structuredList(structured) } else if pair.count == 3 {
                        .pairs(type: pair[0], first: pair[1], second: pair[2])
                    } else { try ValueKind.of(raw, in: operation.contract, inlineEnumeration: inline) }
                let input = input(name, kind: kind, required: required.contains(name), raw as? Mapping, raw)
                inputs.append(input)
                members.append("\(input.label): \(input.value)")
            } catch let error as GeneratorError {
                throw GeneratorError("body field \(name): \(error.description)")
            }
        }
        return (inputs, ".json(.init(" + members.joined(separator: ", ") + "))")
    }
}
