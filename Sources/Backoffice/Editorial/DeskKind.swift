import BackofficeConsole
import BackofficePlatform
import Foundation

/// A kind of reviewed content on the experts' desk in the console (foods, videos, recipes): how
/// its records are named in lists and described on their page, and how the editor's form shows
/// and reads what a writer writes. One generic section serves every such kind
/// (`Console.registerDesk`): an expert's own drafts, what waits in review and what is live; a
/// manager's review queue and every record by state; a record's page with its facts, the diff
/// between two versions and the moves the role may make; the editor.
protocol DeskKind: VersionedReviewed, WrittenReviewed, HoldsReviewStatus {
    /// The section's title in the navigation ("Foods"), and an expert's desk's ("My foods").
    static var sectionTitle: String { get }
    static var deskTitle: String { get }
    /// What the editor says of a new record before it is saved.
    static var editorHint: String { get }
    /// The permission to import a file of them, for kinds imported in bulk (foods).
    static var importAction: Action? { get }

    /// The record's name in lists and as its page's heading.
    var heading: String { get }
    /// One line under the name in lists ("Bread · 250 kcal per 100 g").
    var line: String { get }
    /// What the record's page says of it besides its state, label and value.
    var deskFacts: [DeskFact] { get }
    /// A version's name, in the list of versions.
    static func heading(of version: Content) -> String
    /// A version as lines of text, for the diff between two versions.
    static func text(of version: Content) -> String

    /// The editor's fields with `values` (the form as sent, or a record's values), in order.
    static func fields(_ values: [String: String], isNew: Bool, in console: ConsoleRequest) async throws
        -> [DeskField]
    /// The newest version as the editor's values.
    static func values(of record: Self) -> [String: String]
    /// What the form says, read into content: a value that cannot be read is 422 naming its field.
    static func written(from form: ConsoleForm, in console: ConsoleRequest) async throws -> Written

    /// The form's field a refusal's field names (the same name unless the form lays it out otherwise).
    static func formField(_ field: String, in form: ConsoleForm) -> String

    /// The use case that writes a first version from the form.
    associatedtype Creation: AuditedOperation where Creation.Output == Self
    static func creation(_ written: Written, from form: ConsoleForm) -> Creation
}

extension DeskKind {
    static var importAction: Action? { nil }
    static func formField(_ field: String, in form: ConsoleForm) -> String { field }

    /// A refusal of what `form` sent, each issue next to the form's field.
    static func issues(_ refusal: DomainError, form: ConsoleForm) throws -> [FieldIssue] {
        try FormRefusal.issues(refusal).map {
            FieldIssue(field: formField($0.field, in: form), code: $0.code, message: $0.message)
        }
    }

    /// The section's path under `/console` (`foods`): the kind's table.
    static var deskPath: String { table }
}

extension DeskKind where Creation == CreateReviewed<Self> {
    static func creation(_ written: Written, from form: ConsoleForm) -> Creation { CreateReviewed(content: written) }
}

/// The whole content an editor sends: every field replaced (an update from the console's form).
struct WholeContent<Content: WrittenContent>: ContentChanges {
    let content: Content
    func applied(to content: Content) -> Content { self.content }
}

/// One fact on a record's page ("Barcode", "4006381333931").
struct DeskFact: TemplateValues {
    let label: String
    let value: String
    var templateValues: [(String, Any)] { [("label", label), ("value", value)] }
}

/// One field of a desk editor's form, as the template draws it: its label, its value, its hint,
/// and the refusal next to it. A group's parts sit on one row (an ingredient's food, quantity
/// and unit).
struct DeskField: TemplateValues {
    enum Kind { case text, url, number, textarea, select, checkbox, checkboxes, group, hidden }

    let name: String
    let label: String
    let kind: Kind
    var value = ""
    var hint: String?
    var options: [ConsoleOption] = []
    var parts: [DeskField] = []
    var error: String?
    /// A text area's height in lines.
    var rows = 3

    /// Each field with the refusal's message for its name, a group's parts too.
    static func marked(_ fields: [DeskField], with refusal: FormRefusal) -> [DeskField] {
        fields.map { field in
            var field = field
            field.error = refusal.byField[field.name]
            field.parts = marked(field.parts, with: refusal)
            return field
        }
    }

    /// A figure as a form shows it: up to two decimals, no trailing zeros ("12.5", "300").
    static func figure(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    var templateValues: [(String, Any)] {
        [
            ("name", name), ("label", label), ("value", value), ("hint", hint as Any), ("error", error as Any),
            ("isInput", [.text, .url, .number].contains(kind)), ("inputType", kind == .url ? "url" : "text"),
            ("inputMode", kind == .number ? "decimal" : "text"), ("isTextarea", kind == .textarea), ("rows", rows),
            ("isSelect", kind == .select), ("isCheckbox", kind == .checkbox), ("checked", value == "yes"),
            ("isCheckboxes", kind == .checkboxes), ("isGroup", kind == .group), ("isHidden", kind == .hidden),
            ("options", options),
            ("parts", parts),
        ]
    }
}

/// A form's values read as content, each value that cannot be read remembered by field: `check`
/// refuses them together (422), as the use case refuses what breaks a rule.
struct DeskFormReader {
    let form: ConsoleForm
    private(set) var issues: [FieldIssue] = []

    init(_ form: ConsoleForm) { self.form = form }

    /// The field's text trimmed, "" when absent.
    func text(_ name: String) -> String { form.text(name) ?? "" }

    /// The field's number; nil when blank (and a refusal when `required`), or when not a number.
    mutating func number(_ name: String, required: Bool = false) -> Double? {
        guard let text = form.text(name) else {
            if required { refuse(name, "required", "required") }
            return nil
        }
        guard let value = Double(text.replacingOccurrences(of: ",", with: ".")), value.isFinite else {
            refuse(name, "not_a_number", "must be a number")
            return nil
        }
        return value
    }

    /// Refuses the field `name` with `code` and `message`.
    mutating func refuse(_ name: String, _ code: String, _ message: String) {
        issues.append(FieldIssue(field: name, code: code, message: message))
    }

    /// Whether the checkbox `name` is ticked.
    func ticked(_ name: String) -> Bool { form[name] == "yes" }

    /// Words separated by commas or spaces, in lower case.
    func words(_ name: String) -> [String] {
        text(name).split(whereSeparator: { $0 == "," || $0.isWhitespace }).map { $0.lowercased() }
    }

    /// Refuses (422) when a value could not be read.
    func check() throws { if !issues.isEmpty { throw DomainError.invalid(issues) } }
}
