import BackofficePlatform
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// The console's main navigation: the sections the domains' pages register (`add`, as they
/// register their routes), each shown to the roles the policy lets read its first page.
package final class ConsoleNavigation: Sendable {
    package struct Item {
        package let href: String
        package let label: String
        package let current: Bool

        /// A link to `href` named `label`, marked when it is the page shown.
        package static func link(href: String, label: String, current: Bool) -> Item {
            Item(href: href, label: label, current: current)
        }
    }

    /// `items` as a list's links (`<li><a>`), the current one marked `aria-current="page"`: the
    /// navigation on every page and a board's tabs, written in Swift
    /// (docs/decisions/console-tables-in-swift.md).
    package static func links(_ items: some Sequence<Item>) -> HTML {
        HTML(
            joining: items.lazy.map { item in
                item.current
                    ? "<li><a href=\"\(item.href)\" aria-current=\"page\">\(item.label)</a></li>"
                    : "<li><a href=\"\(item.href)\">\(item.label)</a></li>"
            })
    }

    private let sections = Mutex<[(href: String, label: String, action: Action)]>([])

    /// A section at `href`, shown to roles that may perform `action` (its first page's).
    package func add(_ href: String, _ label: String, needs action: Action) {
        sections.withLock { $0.append((href, label, action)) }
    }

    /// Home, then the sections `role` may read, in the order they were added.
    package func items(for role: String, policies: PolicySet, current path: String) -> [Item] {
        let links =
            [("/console/home", "Home")]
            + sections.withLock { $0 }.filter { policies.access.allows(role, $0.action) }.map { ($0.href, $0.label) }
        return links.map { Item(href: $0.0, label: $0.1, current: path == $0.0 || path.hasPrefix($0.0 + "/")) }
    }
}
