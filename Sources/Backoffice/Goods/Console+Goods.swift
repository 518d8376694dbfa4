import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// A shop's goods: the list (status and category filters, cursor paging), a new good, and a
    /// good's page where it is edited. Each action is the API's use case (`ListGoods`,
    /// `CreateGood`, `UpdateGood`) with its policy and audit event.
    func registerGoods(on group: RouterGroup<AppRequestContext>) {
        section("goods", "Goods", needs: ListGoods.action, on: group) { console in try await console.goodsList() }
        get("goods/new", on: group) { console in console.goodForm(values: [:], issues: [], good: nil) }
        post("goods/new", on: group) { console in
            return try await console.submit(reading: GoodForm.issues) {
                let fields = try GoodForm(console.form).fields()
                let good = try await console.run(CreateGood(sku: console.form["sku"] ?? "", fields: fields))
                return console.redirect(
                    "/console/goods/\(good.id.text)", flash: "Created \(good.name) (\(good.sku)) as a draft.")
            } refused: { issues in
                console.goodForm(values: console.form.values, issues: issues, good: nil)
            }
        }
        get("goods/{id}", on: group) { console in
            let good = try await console.read(GetGood(id: try console.routeID()))
            return console.goodForm(values: GoodForm.values(of: good), issues: [], good: good)
        }
        post("goods/{id}", on: group) { console in
            let id = try console.routeID()
            return try await console.submit(reading: GoodForm.issues) {
                let form = GoodForm(console.form)
                let good = try await console.run(
                    UpdateGood(goodID: id, changes: try form.changes(), ifMatch: console.form["version"]))
                return console.redirect("/console/goods/\(good.id.text)", flash: "Saved \(good.name).")
            } refused: { issues in
                let current = try await console.read(GetGood(id: id))
                var issues = issues
                // Who changed it and when is said only for a stale edit.
                if let stale = issues.firstIndex(where: { $0.code == "changed" }) {
                    let change = try await console.readOwn(LastChange(targetType: "good", targetID: id.text))
                    issues[stale] = FieldIssue(field: "", code: "changed", message: GoodForm.changed(by: change))
                }
                return console.goodForm(values: console.form.values, issues: issues, good: current)
            }
        }
    }
}

extension ConsoleRequest {
    /// The good's form: new (no `good`) or editing `good`, filled with `values`, each issue next
    /// to its field (422 when there are issues).
    fileprivate func goodForm(values: [String: String], issues: [FieldIssue], good: Good?) -> ConsoleAnswer {
        var data: [String: Any] = [
            "values": values,
            "statuses": ConsoleOption.all(Good.Status.allCases.map(\.rawValue), selected: values["status"] ?? "draft"),
        ]
        FormRefusal(issues).add(to: &data)
        if let good {
            data["good"] = GoodView(good)
            data["version"] = EntityTag.of(good.version)
        }
        let title = good.map { "Edit \($0.name)" } ?? "New good"
        return page("good-form", title: title, status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }
}

/// A good as a list row and a page's heading show it.
struct GoodView {
    let id: String, sku: String, name: String, category: String, price: String, fitPoints: String, stock: Int64,
        status: String
    let lowStock: Bool, archived: Bool

    init(_ good: Good) {
        id = good.id.text
        sku = good.sku
        name = good.name
        category = good.category
        price = good.priceCents.map(Money.dollars) ?? "—"
        fitPoints = good.priceFitPoints.map(Money.fitPoints) ?? "—"
        stock = good.stock
        status = good.status.rawValue
        lowStock = good.stock < 5 && good.status != .archived
        archived = good.status == .archived
    }
}

/// The good form's fields, read into the use cases' types: a price in dollars (`12.50`), a price
/// in FitPoints, stock, status, and image URLs one per line. What does not parse is a field
/// issue, reported with the use case's own.
struct GoodForm {
    let form: ConsoleForm

    init(_ form: ConsoleForm) { self.form = form }

    /// Every field, for a new good.
    func fields() throws -> GoodFields {
        let changes = try changes()
        return GoodFields(
            name: changes.name ?? "", description: changes.description ?? "", category: changes.category ?? "",
            priceCents: changes.priceCents,
            priceFitPoints: changes.priceFitPoints, stock: changes.stock ?? 0, imageURLs: changes.imageURLs ?? [])
    }

    /// Every field as a change (the form shows them all).
    func changes() throws -> GoodChanges {
        var issues: [FieldIssue] = []
        func number(_ field: String, _ parse: (String) -> Int64?, _ message: String) -> Int64? {
            guard let text = form.text(field) else { return nil }
            guard let value = parse(text) else {
                issues.append(FieldIssue(field: field, code: "invalid_number", message: message))
                return nil
            }
            return value
        }
        let cents = number("price", Money.cents, "must be an amount in dollars, such as 12.50")
        let fitPoints = number("price_fitpoints", { Int64($0) }, "must be a whole number of FitPoints")
        let stock = number("stock", { Int64($0) }, "must be a whole number")
        let status = try Self.status(form.text("status"))
        guard issues.isEmpty else { throw DomainError.invalid(issues) }
        let images = (form["image_urls"] ?? "").split(whereSeparator: \.isNewline).map {
            $0.trimmingCharacters(in: .whitespaces)
        }.filter {
            !$0.isEmpty
        }
        return GoodChanges(
            name: form.text("name") ?? "", description: form.text("description") ?? "",
            category: form.text("category") ?? "", priceCents: cents,
            priceFitPoints: fitPoints, stock: stock ?? 0, status: status, imageURLs: images)
    }

    /// A status named in a form or a query; one the console does not offer is refused (422).
    static func status(_ text: String?) throws -> Good.Status? {
        guard let text else { return nil }
        guard let status = Good.Status(rawValue: text) else {
            throw DomainError.invalid([
                FieldIssue(field: "status", code: "unknown_status", message: "must be draft, active or archived")
            ])
        }
        return status
    }

    /// A stored good as the form's values.
    static func values(of good: Good) -> [String: String] {
        [
            "sku": good.sku, "name": good.name, "description": good.description, "category": good.category,
            "price": good.priceCents.map(Money.plain) ?? "",
            "price_fitpoints": good.priceFitPoints.map(String.init) ?? "",
            "stock": String(good.stock), "status": good.status.rawValue,
            "image_urls": good.imageURLs.joined(separator: "\n"),
        ]
    }

    /// The refusal as issues next to the form's fields; an `If-Match` conflict says who saved
    /// the good since, and when.
    /// A refusal as issues by the form's fields (a stale edit's message said by `changed(by:)`).
    static func issues(_ refusal: DomainError) throws -> [FieldIssue] {
        try FormRefusal.issues(refusal, fieldNames: ["price_cents": "price"], conflictFields: ["sku_taken": "sku"])
    }

    /// What a stale edit says: who changed the good and when, when the log knows.
    static func changed(by change: (who: String, at: Date)?) -> String {
        let who =
            change.map { "\($0.who) changed this good at \(ConsoleTime.text($0.at))" } ?? "Someone changed this good"
        return "\(who), after you opened it. Your edits are kept below: reload the page to see theirs."
    }
}

extension ConsoleRequest {
    /// The goods list: its filters, a page of goods, and the bulk archive's boxes where the role may.
    fileprivate func goodsList() async throws -> ConsoleAnswer {
        let status = try GoodForm.status(form.text("status"))
        let category = form.text("category")
        let search = form.text("q")
        let after = try Cursor.textAndID(form.text("cursor")).map { (sku: $0.text, id: $0.id) }
        let goods = try await read(
            ListGoods(status: status, category: category, search: search, after: after, limit: Console.pageSize + 1))
        let (shown, cursor) = keysetPage(goods, limit: Console.pageSize) { [$0.sku, $0.id.text] }
        let next = cursor.map {
            ConsoleLinks.path(
                "/console/goods", ["status": status?.rawValue, "category": category, "q": search, "cursor": $0])
        }
        var data: [String: Any] = [
            "goods": shown.map(GoodView.init), "hasGoods": !shown.isEmpty, "category": category ?? "",
            "q": search ?? "",
            "canImport": may(ImportGoods.action)
                && principal.knownRole.map { !$0.isPlatform } ?? false,
            "canExport": may(ExportGoods.action),
            "canArchive": may(BulkGoodsArchive.action) && may(ArchiveGood.action),
            "statuses": ConsoleOption.all(
                Good.Status.allCases.map(\.rawValue), selected: status?.rawValue, any: "Any status"),
            "canCreate": principal.knownRole.map { !$0.isPlatform } ?? false,
        ]
        if let next { data["next"] = next }
        return page("goods", title: "Goods", data)
    }
}
