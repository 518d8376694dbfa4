import Foundation
import NIOCore

/// The one place every string enters the service. PostgreSQL text cannot hold U+0000, so a NUL
/// in the path, a query parameter or anywhere in a JSON body is refused with 422
/// `validation_failed` naming the field, before any handler or SQL runs.
package enum InputScreen {
    package static func check(path: String, query: String?, body: ByteBuffer) throws {
        if path.removingPercentEncoding?.contains("\0") ?? false || path.lowercased().contains("%00") {
            throw nul(in: "path")
        }
        if let query, query.contains("%00") || query.contains("\0") {
            for item in URLComponents(string: "?" + query)?.queryItems ?? []
            where (item.name + (item.value ?? "")).contains("\0") {
                throw nul(in: item.name.replacingOccurrences(of: "\0", with: ""))
            }
            throw nul(in: "query")
        }
        guard body.readableBytes > 0 else { return }
        if body.withUnsafeReadableBytes(containsRawNUL) { throw nul(in: "body") }
        guard body.withUnsafeReadableBytes(containsEscapedNUL) else { return }
        // Decode to find which field holds it (an escaped backslash before `u0000` is not a NUL).
        if let document = try? JSONSerialization.jsonObject(
            with: Data(body.readableBytesView), options: [.fragmentsAllowed]),
            let field = fieldWithNUL(document)
        {
            throw nul(in: field.isEmpty ? "body" : field)
        }
    }

    package static func nul(in field: String) -> Problem {
        Problem.invalid([
            FieldIssue(field: field, code: "invalid_character", message: "must not contain the NUL character (U+0000)")
        ])
    }

    /// Whether the bytes hold a NUL byte (the C library's search: bulk bodies are megabytes).
    private static func containsRawNUL(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let start = bytes.baseAddress else { return false }
        return memchr(start, 0, bytes.count) != nil
    }

    private static let escapedNUL = Array(#"\u0000"#.utf8)

    /// Whether the bytes hold the JSON escape `\u0000` (perhaps escaped itself: decoding decides).
    /// Only the backslashes are visited, found by the C library's search.
    private static func containsEscapedNUL(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let start = bytes.baseAddress else { return false }
        let end = start + bytes.count
        var next = start
        while let found = memchr(next, Int32(UInt8(ascii: "\\")), end - next).map(UnsafeRawPointer.init) {
            if end - found >= escapedNUL.count, memcmp(found, escapedNUL, escapedNUL.count) == 0 { return true }
            next = found + 1
        }
        return false
    }

    /// The dotted path of the first string (or key) holding a NUL, "" for the document itself.
    private static func fieldWithNUL(_ value: Any, path: String = "") -> String? {
        switch value {
        case let text as String:
            return text.contains("\0") ? path : nil
        case let object as [String: Any]:
            for (key, member) in object.sorted(by: { $0.key < $1.key }) {
                let child = path.isEmpty ? key : path + "." + key
                if key.contains("\0") { return child.replacingOccurrences(of: "\0", with: "") }
                if let found = fieldWithNUL(member, path: child) { return found }
            }
            return nil
        case let array as [Any]:
            for (index, member) in array.enumerated() {
                if let found = fieldWithNUL(member, path: path + "[\(index)]") { return found }
            }
            return nil
        default:
            return nil
        }
    }
}
