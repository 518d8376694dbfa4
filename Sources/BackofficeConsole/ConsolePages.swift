import BackofficePlatform
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Mustache
import NIOCore
import Synchronization

/// A value a template reads by name, named without a `Mirror`: for the small values every page
/// repeats (navigation links, options; docs/decisions/console-tables-in-swift.md).
package protocol TemplateValues {
    var templateValues: [(String, Any)] { get }
}

/// Text given to a template's unescaped slot: the page is not rendered.
package struct MarkupSlotRefusal: Error, CustomStringConvertible {
    package let name: String
    package var description: String { "text, not HTML, for its unescaped slot '\(name)'" }
}

/// The console's templates (Mustache, which escapes every `{{value}}`; the unescaped
/// `{{{name}}}` form takes only `HTML`, escaped by construction) and its static assets, served
/// under names carrying their content's hash, so they are cached for a year and a new build is
/// fetched at once.
package struct ConsolePages: Sendable {
    package let library: MustacheLibrary
    /// The names some template inserts unescaped (`{{{nameHTML}}}` or `{{&nameHTML}}`: such a name
    /// ends in `HTML`, or the templates do not load): wherever a page's data has one, its value
    /// must be `HTML`, or the page is not rendered.
    package let markupSlots: Set<String>
    /// Asset bytes and content type by hashed name (`console.3f2a9c1b.css`).
    package let assets: [String: (bytes: ByteBuffer, contentType: String)]
    /// The hashed path of each asset by its file name (`console.css` → `/console/assets/console.3f2a9c1b.css`).
    package let assetPaths: [String: String]

    /// The pages of the shell's bundle and `bundles`, loaded once per process for each list of
    /// bundles (the resources do not change while it runs).
    package static func loaded(_ bundles: [Bundle]) throws -> ConsolePages {
        let key = bundles.map(\.bundlePath)
        if let pages = loadedPages.withLock({ $0[key] }) { return pages }
        let pages = try load(bundles)
        loadedPages.withLock { $0[key] = pages }
        return pages
    }

    private static let loadedPages = Mutex<[[String]: ConsolePages]>([:])

    /// Loads the templates of the shell's bundle and of `bundles` (each one's `Pages/` folders are
    /// flattened into its root by Package.swift), and the shell's assets.
    package static func load(_ bundles: [Bundle] = []) throws -> ConsolePages {
        guard let resources = Bundle.module.resourceURL else {
            throw ConfigurationError(description: "the console's resources are missing")
        }
        var library = MustacheLibrary()
        var slots: Set<String> = []
        var names: Set<String> = []
        for folder in [resources] + bundles.compactMap(\.resourceURL) {
            for file in try FileManager.default.contentsOfDirectory(atPath: folder.path)
            where file.hasSuffix(".mustache") {
                guard names.insert(file).inserted else {
                    throw ConfigurationError(
                        description: "two of the console's templates are named \(file) (the second in \(folder.path); "
                            + "a file an older build left there goes with `swift package clean`)")
                }
                let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                try library.register(text, named: String(file.dropLast(".mustache".count)))
                let found = markupSlots(in: text)
                if let name = found.first(where: { !$0.hasSuffix("HTML") }) {
                    throw ConfigurationError(
                        description: "the console's template \(file) inserts '\(name)' unescaped: "
                            + "such a slot's name ends in HTML")
                }
                slots.formUnion(found)
            }
        }
        var assets: [String: (bytes: ByteBuffer, contentType: String)] = [:]
        var paths: [String: String] = [:]
        let directory = resources.appendingPathComponent("Assets")
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() {
            let data = try Data(contentsOf: directory.appendingPathComponent(name))
            let digest = hex(SHA256.hash(data: data).prefix(6))
            let ext = (name as NSString).pathExtension
            let hashed = "\((name as NSString).deletingPathExtension).\(digest).\(ext)"
            let type =
                switch ext {
                case "css": "text/css; charset=utf-8"
                case "js": "text/javascript; charset=utf-8"
                case "svg": "image/svg+xml"
                default: "application/octet-stream"
                }
            assets[hashed] = (ByteBuffer(data: data), type)
            paths[name] = "/console/assets/\(hashed)"
        }
        return ConsolePages(library: library, markupSlots: slots, assets: assets, assetPaths: paths)
    }

    /// The names `template` inserts unescaped.
    package static func markupSlots(in template: String) -> Set<String> {
        let slot = #/\{\{(?:\{|&)\s*([^}\s]+)\s*\}?\}\}/#
        return Set(template.matches(of: slot).map { String($0.output.1) })
    }

    /// `template` rendered with `values` and the layout's assets.
    package func render(
        _ template: String, _ values: [String: Any], status: HTTPResponse.Status = .ok, clearsFlash: Bool = false
    ) -> RenderedPage {
        var data: [String: Any]
        do {
            data = try Self.flattened(values, slots: markupSlots) as? [String: Any] ?? [:]
        } catch {
            return RenderedPage(
                status: .internalServerError, html: "The console's template '\(template)' was given \(error).")
        }
        data["stylesheet"] = assetPaths["console.css"]
        data["script"] = assetPaths["console.js"]
        guard let html = library.render(data, withTemplate: template) else {
            return RenderedPage(status: .internalServerError, html: "The console's template '\(template)' is missing.")
        }
        return RenderedPage(status: status, html: html, clearsFlash: clearsFlash)
    }

    /// Template data as Mustache reads it fastest: every struct (a row's view) becomes a
    /// dictionary here, with one `Mirror` of it, instead of a `Mirror` for each name a template
    /// looks up in it (the orders board looked up thousands per page); an optional's value is
    /// kept, a nil one left out (a section over it renders nothing, as before). A value named as
    /// a markup slot must be `HTML`: text there would reach the page unescaped.
    package static func flattened(_ value: Any, slots: Set<String>) throws -> Any? {
        switch value {
        case is String, is Bool, is Int, is Int64, is Int32, is Double, is Float, is Substring, is UUID, is Date,
            is Decimal, is URL, is HTML, is ShownTime:
            return value
        case let dictionary as [String: Any]: return try fields(dictionary.map { ($0.key, $0.value) }, slots: slots)
        case let view as any TemplateValues: return try fields(view.templateValues, slots: slots)
        case let array as [Any]: return try array.compactMap { try flattened($0, slots: slots) }
        default:
            let mirror = Mirror(reflecting: value)
            switch mirror.displayStyle {
            case .optional: return try mirror.children.first.flatMap { try flattened($0.value, slots: slots) }
            case .struct, .class:
                return try fields(
                    mirror.children.compactMap { child in child.label.map { ($0, child.value) } }, slots: slots)
            case .collection, .set: return try mirror.children.compactMap { try flattened($0.value, slots: slots) }
            default: return value
            }
        }
    }

    private static func fields(_ named: [(String, Any)], slots: Set<String>) throws -> [String: Any] {
        var fields: [String: Any] = [:]
        for (name, value) in named {
            guard let field = try flattened(value, slots: slots) else { continue }
            guard !slots.contains(name) || field is HTML else { throw MarkupSlotRefusal(name: name) }
            fields[name] = field
        }
        return fields
    }

    /// An error page in the console's layout (without its navigation: `ConsoleRequest.failure`
    /// shows it with).
    package func error(status: HTTPResponse.Status, title: String, detail: String, requestID: String?) -> RenderedPage {
        render("error", Self.errorValues(title: title, detail: detail, requestID: requestID), status: status)
    }

    /// The page for `error`; a refused form (`ConsoleRefusal.forgery`: a missing CSRF token, a
    /// foreign `Origin`) is a 403 that says so, never a server error.
    package func error(_ error: any Error, requestID: String, logger: Logger) -> RenderedPage {
        if case ConsoleRefusal.forgery = error {
            return self.error(
                status: .forbidden, title: "This form has expired", detail: ConsoleRefusal.forgery.detail,
                requestID: requestID)
        }
        let (status, title, detail, shownID) = Self.describe(error, requestID: requestID, logger: logger)
        return self.error(status: status, title: title, detail: detail, requestID: shownID)
    }

    package static func errorValues(title: String, detail: String, requestID: String?) -> [String: Any] {
        var values: [String: Any] = ["title": title, "detail": detail]
        if let requestID { values["requestID"] = requestID }
        return values
    }

    /// What the error page for `error` says: the problem's status, title and detail (as the API
    /// would answer), and for a server error only the request id (the cause is logged).
    package static func describe(_ error: any Error, requestID: String, logger: Logger) -> (
        HTTPResponse.Status, String, String, String?
    ) {
        let problem = Problem.answering(error, logger: logger)
        let status = HTTPResponse.Status(code: problem.status)
        switch problem.status {
        case 403: return (status, "Not allowed", "Your role may not do this. " + (problem.detail ?? ""), nil)
        case 404: return (status, "Not found", "Nothing here for you: it does not exist, or it is not yours.", nil)
        case 500..<503, 504...:
            return (
                status, "Something went wrong", "Nothing was changed. Quote this request id if you report it.",
                requestID
            )
        default: return (status, problem.title, problem.detail ?? "", nil)
        }
    }

    /// A static asset by its hashed name: cached for a year (the name changes with its content).
    package func asset(_ name: String, request: Request) throws -> Response {
        guard let asset = assets[name] else { throw HTTPError(.notFound) }
        var response = Response(
            status: .ok, headers: [.contentType: asset.contentType], body: .init(byteBuffer: asset.bytes))
        ConsoleHeaders.apply(to: &response, cache: "public, max-age=31536000, immutable")
        return response
    }
}
