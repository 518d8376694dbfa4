import BackofficeConsole
import BackofficePlatform
import Foundation

/// The console's half of the bulk template: the items a list's form ticked (`<prefix><id>` =
/// `yes`), and the page that answers a bulk change (`bulk`, the shell's): each item's outcome; after
/// a dry run, a form that makes the change for the items it would change, carrying the form's other
/// values (a reason, a time) as they were.
struct ConsoleBulk<State: BulkState>: Sendable {
    /// The list the bulk came from, and what its items are called.
    let back: String, backLabel: String, noun: String, itemLabel: String
    /// The verb of the change ("Archive") and its past participle ("archived").
    let verb: String, doneWord: String
    /// Where the form posts, and the prefix of its items' fields.
    let action: String, prefix: String
    /// An item's page, its label (a SKU, an email) and name.
    let href: @Sendable (UUID) -> String
    let label: @Sendable (State) -> String, name: @Sendable (State) -> String

    /// A refusal's issues, the bulk's list named `items` (the field the page shows it by).
    static func issues(_ refusal: DomainError) throws -> [FieldIssue] {
        try FormRefusal.issues(refusal, fieldNames: ["good_ids": "items", "customer_ids": "items"])
    }

    /// The ids ticked in `form`, in id order (so a dry run and its confirmation list them alike).
    func ticked(_ form: ConsoleForm) -> [UUID] {
        form.values.keys.sorted().compactMap { field in
            guard field.hasPrefix(prefix), form.text(field) == "yes" else { return nil }
            return UUID(uuidString: String(field.dropFirst(prefix.count)))
        }
    }

    /// The page's values for `outcomes`; `carried` are the form's values the confirmation sends again.
    func page(_ outcomes: [BulkOutcome<State>], dryRun: Bool, carried: [String: String] = [:]) -> [String: Any] {
        let ready = outcomes.filter { $0.kind == .wouldDo }
        return [
            "back": back, "backLabel": backLabel, "noun": noun, "itemLabel": itemLabel, "verb": verb,
            "done_word": doneWord, "action": action, "dryRun": dryRun, "ready": ready.count,
            "canConfirm": dryRun && !ready.isEmpty, "refused": outcomes.count { $0.kind == .refused },
            "done": outcomes.count { $0.kind == .done },
            "outcomes": outcomes.map { outcome in
                [
                    "href": href(outcome.id), "label": outcome.state.map(label) ?? String(outcome.id.text.prefix(8)),
                    "name": outcome.state.map(name) ?? "",
                    "outcome": outcome.kind == .refused
                        ? "refused" : dryRun ? "would be \(doneWord)" : doneWord,
                    "refused": outcome.kind == .refused,
                    "detail": outcome.refusal.flatMap(Problem.describing).map { $0.detail ?? $0.title } ?? "",
                ] as [String: Any]
            },
            "hidden": ready.map { ["field": prefix + $0.id.text] },
            "carried": carried.sorted { $0.key < $1.key }.map { ["name": $0.key, "value": $0.value] },
        ]
    }
}
