import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Console markup: HTML escapes every value it is given, and a template's unescaped slot takes only HTML")
struct ConsoleMarkupTests {
    @Test(
        """
        an interpolated value is escaped (the five characters that end an element or an attribute), other text \
        kept as it is
        """
    )
    func escapesValues() {
        let name = "<img src=x onerror='alert(1)'> & \"Ann\" é😀"
        let cell: HTML = "<td title=\"\(name)\">\(name)</td>"
        let escaped = "&lt;img src=x onerror=&#39;alert(1)&#39;&gt; &amp; &quot;Ann&quot; é😀"
        #expect(cell.text == "<td title=\"\(escaped)\">\(escaped)</td>")
        let row: HTML = "<tr>\(cell)\(42)</tr>"
        #expect(row.text == "<tr><td title=\"\(escaped)\">\(escaped)</td>42</tr>", "HTML inside HTML is kept as markup")
        #expect(HTML(joining: [row, .empty, "<tr></tr>"]).text == row.text + "<tr></tr>")
        let links = ConsoleNavigation.links([
            .init(href: "/console/a?x=1&y=2", label: "A & B", current: true),
            .init(href: "/b", label: "B", current: false),
        ])
        #expect(
            links.text
                == """
                <li><a href=\"/console/a?x=1&amp;y=2\" aria-current=\"page\">A &amp; B</a></li><li><a \
                href=\"/b\">B</a></li>
                """
        )
        let plain: HTML = "\("plain text, no markup")"
        #expect(plain.text == "plain text, no markup")
    }

    @Test("what options name for templates without a Mirror is each one's fields, all of them")
    func templateValuesAreTheFields() {
        let values: [any TemplateValues] = [
            ConsoleOption.choice(value: "paid", label: "Paid", selected: false),
            ConsoleOption.choice(value: "", label: "Any", selected: true),
        ]
        for value in values {
            let fields = Mirror(reflecting: value).children.map { "\($0.label ?? "?")=\($0.value)" }.sorted()
            #expect(value.templateValues.map { "\($0.0)=\($0.1)" }.sorted() == fields)
        }
    }

    @Test("money reads as dollars with two decimals and as FitPoints, a negative amount with its sign")
    func money() {
        #expect(Money.dollars(1250) == "$12.50")
        #expect(Money.dollars(5) == "$0.05")
        #expect(Money.plain(0) == "0.00")
        #expect(Money.plain(-5) == "-0.05", "a refund's sign is kept under a dollar")
        #expect(Money.plain(-12345) == "-123.45")
        #expect(Money.fitPoints(4000) == "4,000 FP")
        #expect(Money.dollars(123_456_789) == "$1,234,567.89" && Money.dollars(-5) == "-$0.05")
        #expect(Money.dollars(100_000) == "$1,000.00" && Money.dollars(99_999) == "$999.99")
        #expect(Money.cents(Money.plain(987_654_321)) == 987_654_321)
    }

    @Test("the domains' templates load beside the shell's; a name found twice is refused at start-up, naming it")
    func templatesOfOneNameRefused() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pages-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try "<p>{{name}}</p>".write(
            to: folder.appendingPathComponent("extra.mustache"), atomically: true, encoding: .utf8)
        let bundle = try #require(Bundle(path: folder.path))
        let pages = try ConsolePages.load([bundle])
        #expect(pages.render("extra", ["name": "<b>"]).html.contains("&lt;b&gt;"))
        #expect(pages.render("layout", [:]).status == .ok, "the shell's own templates are there too")
        try "<p>again</p>".write(
            to: folder.appendingPathComponent("layout.mustache"), atomically: true, encoding: .utf8)
        #expect {
            try ConsolePages.load([bundle])
        } throws: { error in
            "\(error)".contains("two of the console's templates are named layout.mustache")
        }
    }

    @Test("a page that gives an unescaped slot text (at the top or inside a row) is not rendered; HTML there is")
    func slotTakesOnlyHTML() throws {
        let pages = try ConsolePages.load([Console.templates])
        #expect(pages.markupSlots.contains("rowsHTML"))
        #expect(
            ConsolePages.markupSlots(in: "a {{{rowsHTML}}} b {{& cellHTML }} {{name}}") == ["rowsHTML", "cellHTML"])
        let hostile = "<script>alert(1)</script>"
        let refused = pages.render("orders", ["hasOrders": true, "rowsHTML": hostile])
        #expect(refused.status == .internalServerError)
        #expect(!refused.html.contains(hostile))
        let nested = pages.render(
            "orders", ["hasOrders": true, "tabs": [["value": "paid", "label": "x", "rowsHTML": hostile]]])
        #expect(nested.status == .internalServerError && !nested.html.contains(hostile))
        let rendered = pages.render("orders", ["hasOrders": true, "rowsHTML": HTML("<tr><td>\(hostile)</td></tr>")])
        #expect(rendered.status == .ok)
        #expect(rendered.html.contains("<tr><td>&lt;script&gt;alert(1)&lt;/script&gt;</td></tr>"))
    }
}
