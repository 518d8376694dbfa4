import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

/// The console's half of the bulk template: the items a list's form ticked (`<prefix><id>` =
/// `yes`), and the page that answers a bulk change (`bulk`, the shell's): each item's outcome; after
/// a dry run, a form that makes the change for the items it would change, carrying the form's other
/// values (a reason, a time) as they were.
struct ConsoleBulk<State: BulkState>: Sendable {
    /// The list the bulk came from (`goods`: `/console/goods`), and what its items' column is called.
    let list: String, itemLabel: String
    /// The verb of the change ("Archive") and its past participle ("archived").
    let verb: String, doneWord: String
    /// The prefix of the items' fields in the list's form (`good_`).
    let prefix: String
    /// An item's label (a SKU, an email) and name.
    let label: @Sendable (State) -> String, name: @Sendable (State) -> String

    /// Where the form posts: `/console/<list>/bulk-<verb>`.
    var action: String { "/console/\(list)/bulk-\(verb.lowercased())" }
    /// The page's title.
    var title: String { "\(list.capitalized): \(verb.lowercased()) in bulk" }

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
            "back": "/console/\(list)", "backLabel": list.capitalized, "noun": list, "itemLabel": itemLabel,
            "verb": verb,
            "done_word": doneWord, "action": action, "dryRun": dryRun, "ready": ready.count,
            "canConfirm": dryRun && !ready.isEmpty, "refused": outcomes.count { $0.kind == .refused },
            "done": outcomes.count { $0.kind == .done },
            "outcomes": outcomes.map { outcome in
                [
                    "href": "/console/\(list)/\(outcome.id.text)",
                    "label": outcome.state.map(label) ?? String(outcome.id.text.prefix(8)),
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

extension Console {
    /// The POST of `bulk`'s form: the ticked items run through `change` (a dry run when the form
    /// says `dry_run=yes`), answered with the bulk page; a refusal of the bulk itself (no item, 501,
    /// a missing reason) shown in place. `carrying` names the form's values the confirmation sends again.
    func registerBulk<State>(
        _ bulk: ConsoleBulk<State>, carrying: [String] = [], on group: RouterGroup<AppRequestContext>,
        change: @escaping @Sendable (ConsoleRequest, [UUID], Bool) async throws -> [BulkOutcome<State>]
    ) {
        post(String(bulk.action.dropFirst("/console/".count)), on: group, holdsTransaction: false) { console in
            let dryRun = console.form.text("dry_run") == "yes"
            return try await console.submit(reading: ConsoleBulk<State>.issues) {
                let outcomes = try await change(console, bulk.ticked(console.form), dryRun)
                let carried = Dictionary(uniqueKeysWithValues: carrying.map { ($0, console.form.text($0) ?? "") })
                return console.page("bulk", title: bulk.title, bulk.page(outcomes, dryRun: dryRun, carried: carried))
            } refused: { issues in
                var data = bulk.page([], dryRun: dryRun)
                FormRefusal(issues).add(to: &data)
                return console.page("bulk", title: bulk.title, status: .unprocessableContent, data)
            }
        }
    }
}
