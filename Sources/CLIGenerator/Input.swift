/// What a value of the contract is as a command-line input, and the Swift type the generated
/// client takes for it.
enum ValueKind {
    case text
    case number(String)
    case boolean
    case time
    case enumeration(String)
    case list(String)
    /// A text read from the file the option names (`x-cli` `files`).
    case file
    /// A list of the named schema's items read from the YAML or JSON file the option names
    /// (`x-cli` `structured_files: { orders: BulkOrderItem }`).
    case structuredList(String)
    /// Repeated `A:B` whole-number pairs, each the schema type named with its two members' labels
    /// (`x-cli` `pairs: { lines: [OrderRefundLine, line, quantity] }`).
    case pairs(type: String, first: String, second: String)

    /// The kind of `schema` (a property's or a parameter's). `inlineEnumeration` is the type the
    /// client generator gives an enumeration declared in place.
    static func of(_ schema: Any?, in contract: Contract, inlineEnumeration: String) throws -> ValueKind {
        if let name = Contract.schemaName(schema), let named = contract.resolved(schema) {
            if named["enum"] != nil { return .enumeration("Components.Schemas.\(SwiftName.type(name))") }
            return try of(named, in: contract, inlineEnumeration: inlineEnumeration)
        }
        guard let schema = schema as? Mapping else { throw GeneratorError("a value without a schema") }
        let type = schema.texts("type").first { $0 != "null" }
        switch (type, schema.text("format")) {
        case ("string", "date-time"): return .time
        case ("string", _): return schema["enum"] == nil ? .text : .enumeration(inlineEnumeration)
        case ("integer", "int64"): return .number("Int64")
        case ("integer", "int32"): return .number("Int32")
        case ("integer", _): return .number("Int")
        case ("number", "float"): return .number("Float")
        case ("number", _): return .number("Double")
        case ("boolean", _): return .boolean
        case ("array", _):
            switch try of(schema["items"], in: contract, inlineEnumeration: "") {
            case .text: return .list("String")
            case .enumeration(let type) where !type.isEmpty: return .list(type)
            default: throw GeneratorError("an array of other than strings or a named enumeration")
            }
        default: throw GeneratorError("a value of type \(type ?? "(none)") with no command-line form")
        }
    }
}

/// One input of a generated command: its declaration, and the expression handed to the client.
struct Input {
    /// The JSON name (`renews_at`), the client's label for it (`renewsAt`; `_type` for `type`), the
    /// command's declaration (`--renews-at`) and the expression handed to the client.
    let name: String
    let label: String
    let declaration: String
    let value: String
    /// The enumeration's type when the input takes one (it must be `ExpressibleByArgument`).
    var enumeration: String? = nil

    /// An input for a value named `name` of `kind`, read into `property` (the value's own name when
    /// nil). `positional` makes it an argument.
    /// `preset` is a Swift expression the option defaults to (it is then never absent).
    init(
        name: String, property: String? = nil, kind: ValueKind, required: Bool, positional: Bool, help: String,
        preset: String? = nil
    ) {
        self.name = name
        label = SwiftName.member(name)
        let plain = property ?? SwiftName.member(name, escaping: false)
        let property = SwiftName.keywords.contains(plain) ? "`\(plain)`" : plain
        let flag = "--" + SwiftName.kebab(plain)
        let optional = required || preset != nil ? "" : "?"
        let preset = preset.map { " = \($0)" } ?? ""
        let wrapper = positional ? "@Argument" : "@Option"
        let naming = positional ? "" : SwiftName.flagName(plain)
        let help = naming + "help: \(SwiftName.literal(help))"
        switch kind {
        case .text:
            declaration = "\(wrapper)(\(help)) var \(property): String\(optional)\(preset)"
            value = property
        case .number(let type):
            // A negative number is the option's value, not a flag.
            let parsing = positional ? "" : "parsing: .unconditional, "
            let said = help.dropFirst(naming.count)
            declaration = "\(wrapper)(\(naming)\(parsing)\(said)) var \(property): \(type)\(optional)\(preset)"
            value = property
        case .enumeration(let type):
            enumeration = type
            declaration = "\(wrapper)(\(help)) var \(property): \(type)\(optional)\(preset)"
            value = property
        case .time:
            declaration = "\(wrapper)(\(help)) var \(property): String\(optional)"
            value = "try parseTime(\(property), \(SwiftName.literal(flag)))"
        case .boolean:
            declaration = "@Flag(inversion: .prefixedNo, \(help)) var \(property): Bool\(optional)"
            value = property
        case .file:
            declaration = "\(wrapper)(\(help)) var \(property)File: String\(optional)"
            value = required ? "try readTextFile(\(property)File)" : "try \(property)File.map(readTextFile)"
        case .structuredList(let type):
            declaration = "\(wrapper)(\(help)) var \(property)File: String\(optional)"
            let list = "[Components.Schemas.\(type)].self"
            value =
                required
                ? "try readStructuredFile(\(list), at: \(property)File)"
                : "try \(property)File.map { try readStructuredFile(\(list), at: $0) }"
        case .pairs(let type, let first, let second):
            declaration = "@Option(\(help)) var \(property): [String] = []"
            let made =
                "try parsePairs(\(property), \(SwiftName.literal(flag))).map { "
                + "Components.Schemas.\(type)(\(first): $0.0, \(second): $0.1) }"
            value = required ? made : "\(property).isEmpty ? nil : \(made)"
        case .list(let type):
            if type != "String" { enumeration = type }
            declaration = "@Option(\(help)) var \(property): [\(type)] = []"
            value = required ? property : "\(property).isEmpty ? nil : \(property)"
        }
    }

    init(declaration: String, label: String, value: String) {
        self.name = label
        (self.label, self.declaration, self.value) = (label, declaration, value)
    }
}

/// Names as the contract's Swift client spells them (its idiomatic naming strategy), and Swift literals.
enum SwiftName {
    /// `customer_id` → `customerId`, `If-Match` → `ifMatch`.
    /// Without `escaping`, a keyword stays as it is (`type`) rather than the client's `_type`.
    static func member(_ name: String, escaping: Bool = true) -> String {
        let words = name.split(whereSeparator: { "_- /+".contains($0) }).map(String.init)
        guard let first = words.first else { return "_empty_" }
        let joined = first.prefix(1).lowercased() + first.dropFirst() + words.dropFirst().map(capitalized).joined()
        return escaping && keywords.contains(joined) ? "_\(joined)" : joined
    }

    /// The flag of a property: `renewsAt` → `renews-at`, `energyKcal100g` → `energy-kcal-100g`.
    static func kebab(_ property: String) -> String {
        property.reduce(into: "") { flag, character in
            if character.isUppercase {
                flag += "-" + character.lowercased()
            } else if character.isNumber, let last = flag.last, last.isLetter {
                flag += "-" + String(character)
            } else {
                flag.append(character)
            }
        }
    }

    /// The option's `name:` argument where ArgumentParser's own flag would not be `kebab`'s (a
    /// property with digits), else nothing.
    static func flagName(_ property: String) -> String {
        property.contains(where: \.isNumber) ? "name: .customLong(\(literal(kebab(property)))), " : ""
    }

    /// `lockCustomer` → `LockCustomer`, `order_status` → `OrderStatus`.
    static func type(_ name: String) -> String { capitalized(member(name)) }

    static func capitalized(_ word: String) -> String { word.prefix(1).uppercased() + word.dropFirst() }

    /// A Swift string literal of `text`.
    static func literal(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return "\"\(escaped)\""
    }

    /// The words the client generator prefixes with `_` (its defensive naming's list).
    static let keywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "func", "import", "init", "inout", "let", "operator",
        "precedencegroup", "protocol", "struct", "subscript", "typealias", "var", "fileprivate", "internal", "private",
        "public", "static", "defer", "if", "guard", "do", "repeat", "else", "for", "in", "while", "return", "break",
        "continue", "fallthrough", "switch", "case", "default", "where", "catch", "throw", "as", "Any", "false", "is",
        "nil", "rethrows", "super", "self", "Self", "true", "try", "throws", "yield", "String", "Error", "Int", "Bool",
        "Array", "Type", "type", "Protocol", "await",
    ]
}
