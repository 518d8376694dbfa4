import BackofficeConsole
import BackofficePlatform
import CCmarkGFM
import Foundation
import Synchronization

/// Markdown to HTML by cmark-gfm, GitHub's build of the CommonMark reference implementation (a C
/// library, fuzzed for years and linked from the system), with GitHub's tables, strikethrough and
/// autolinks. Raw HTML passes through: `HTMLSanitizer` runs after it and is the one guard.
///
/// Guarantees, whatever the text:
/// - the parser and the renderer use no recursion per character (cmark's are iterative), so no
///   input overflows a stack;
/// - the work is linear in the text. The library is linear but for two cases that later releases
///   fixed and Debian's 0.29.0.gfm.6 does not, each held by a budget counted before parsing (one
///   pass over the text):
///   - a table pads every row to its header's width, so cells grow as columns × rows: when the
///     widest line's `|` count times the number of lines passes `tableCells`, the text is read
///     without the table extension (its tables show as text);
///   - every link walks back over the image openers (`![`) not yet closed: past `imageOpeners` of
///     them, a zero-width space is put between `!` and `[`, so they read as text, as they look.
enum CommonMark {
    /// Table cells a text may make before tables are read as text.
    static let tableCells = 200_000
    /// Image openers (`![`) a text may hold before they are read as text.
    static let imageOpeners = 1_000

    /// What the budgets decided for a text.
    struct Reading: Equatable {
        var tables = true
        var images = true
    }

    /// `markdown` as HTML (not yet sanitised).
    static func html(_ markdown: String) -> String {
        let reading = reading(of: markdown)
        let text = reading.images ? markdown : markdown.replacingOccurrences(of: "![", with: "!\u{200B}[")
        return render(
            text, extensions: reading.tables ? ["table", "strikethrough", "autolink"] : ["strikethrough", "autolink"])
    }

    /// The budgets' verdict on `markdown`, in one pass over its bytes.
    static func reading(of markdown: String) -> Reading {
        var lines = 1
        var pipes = 0
        var widest = 0
        var openers = 0
        var previous: UInt8 = 0
        for byte in markdown.utf8 {
            switch byte {
            case UInt8(ascii: "\n"):
                lines += 1
                widest = max(widest, pipes)
                pipes = 0
            case UInt8(ascii: "|"): pipes += 1
            case UInt8(ascii: "[") where previous == UInt8(ascii: "!"): openers += 1
            default: break
            }
            previous = byte
        }
        widest = max(widest, pipes)
        return Reading(tables: (widest + 1) * lines <= tableCells, images: openers <= imageOpeners)
    }

    private static let registered: Void = { cmark_gfm_core_extensions_ensure_registered() }()

    /// One render at a time in the process: cmark-gfm keeps the inline parser's special characters in
    /// one global table, which every parser with extensions adds its characters to as it starts and
    /// removes them from as it finishes, so two renders at once can each lose the other's (an
    /// autolink left as text, seen under load). A render is bounded (`reading`), so the wait is short.
    private static let oneAtATime = Mutex(())

    private static func render(_ markdown: String, extensions: [String]) -> String {
        oneAtATime.withLock { _ in renderAlone(markdown, extensions: extensions) }
    }

    private static func renderAlone(_ markdown: String, extensions: [String]) -> String {
        _ = registered
        let options = CMARK_OPT_UNSAFE
        guard let parser = cmark_parser_new(options) else { fatalError("cmark_parser_new: out of memory") }
        defer { cmark_parser_free(parser) }
        for name in extensions {
            if let extensionHandle = cmark_find_syntax_extension(name) {
                cmark_parser_attach_syntax_extension(parser, extensionHandle)
            }
        }
        var text = markdown
        text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { cmark_parser_feed(parser, $0.baseAddress, $0.count) }
        }
        guard let document = cmark_parser_finish(parser) else { fatalError("cmark_parser_finish: out of memory") }
        defer { cmark_node_free(document) }
        guard let html = cmark_render_html(document, options, cmark_parser_get_syntax_extensions(parser)) else {
            fatalError("cmark_render_html: out of memory")
        }
        defer { free(html) }
        return String(cString: html)
    }
}
