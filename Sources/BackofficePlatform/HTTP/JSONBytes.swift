import BackofficeAPI
import Foundation
import NIOCore

/// A growing byte array with the JSON primitives the hand-written encoders need (public for the
/// benchmarks' floor server, which writes its rows with it).
package struct JSONBytes: Sendable {
    package private(set) var bytes: [UInt8] = []

    package init(capacity: Int) { bytes.reserveCapacity(capacity) }

    /// A keyset page as the contract writes it: `{"items":[…],"next_cursor":…}`, each item by `write`.
    package static func page<Item>(
        _ items: ArraySlice<Item>, nextCursor: String?, bytesPerItem: Int, _ write: (Item, inout JSONBytes) -> Void
    ) -> ByteBuffer {
        var out = JSONBytes(capacity: items.count * bytesPerItem + 64)
        out.openPage()
        for (index, item) in items.enumerated() {
            if index > 0 { out.raw(",") }
            write(item, &out)
        }
        out.closePage(nextCursor: nextCursor)
        return ByteBuffer(bytes: out.bytes)
    }

    /// Opens a keyset page: `{"items":[`, its items to follow, comma-separated.
    package mutating func openPage() { raw("{\"items\":[") }

    /// Closes a page `openPage()` opened: the items' `]`, the cursor when another page follows, `}`.
    package mutating func closePage(nextCursor: String?) {
        raw("]")
        optional(",\"next_cursor\":", nextCursor)
        raw("}")
    }

    package mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Bytes as they are (already JSON).
    package mutating func raw(_ text: UnsafeRawBufferPointer) { bytes.append(contentsOf: text) }

    package mutating func raw(_ text: [UInt8]) { bytes.append(contentsOf: text) }

    package mutating func raw(byte: UInt8) { bytes.append(byte) }

    /// Starts over, keeping the capacity.
    package mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    package mutating func integer(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[count] = UInt8(48 + magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for index in stride(from: count - 1, through: 0, by: -1) { bytes.append(buffer[index]) }
        }
    }

    package mutating func bool(_ value: Bool) { value ? raw("true") : raw("false") }

    /// A number as Foundation's JSONEncoder writes a `Double`: its shortest round-tripping
    /// description without a trailing `.0` (`12000`, `0.1`, `1e+16`).
    package mutating func number(_ value: Double) {
        if value.rounded() == value, value.magnitude < 1e15, value != 0 || value.sign == .plus {
            integer(Int64(value))
            return
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }

    package mutating func date(_ value: Date) {
        bytes.append(UInt8(ascii: "\""))
        RFC3339DateTranscoder.write(value, into: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// A UUID as a quoted lower-case string, without allocating one.
    package mutating func uuid(_ value: UUID) {
        withUnsafeBytes(of: value.uuid) { uuid(bytes: $0) }
    }

    /// Bytes as a quoted lower-case hex string.
    package mutating func hex(_ raw: UnsafeRawBufferPointer) {
        let digits: StaticString = "0123456789abcdef"
        bytes.append(UInt8(ascii: "\""))
        for byte in raw {
            bytes.append(digits.utf8Start[Int(byte >> 4)])
            bytes.append(digits.utf8Start[Int(byte & 0x0F)])
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// A UUID's 16 bytes as a quoted lower-case string.
    package mutating func uuid(bytes raw: UnsafeRawBufferPointer) {
        let digits: StaticString = "0123456789abcdef"
        bytes.append(UInt8(ascii: "\""))
        for (index, byte) in raw.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { bytes.append(UInt8(ascii: "-")) }
            bytes.append(digits.utf8Start[Int(byte >> 4)])
            bytes.append(digits.utf8Start[Int(byte & 0x0F)])
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// A JSON string, escaped as Foundation's JSONEncoder does with `.withoutEscapingSlashes` (and
    /// PostgreSQL's `escape_json`: the same escapes, `\u00xx` in lower case, non-ASCII as is);
    /// text with nothing to escape is copied in one go.
    package mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { string(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// A JSON string from UTF-8 bytes, escaped as `string(_:)` escapes.
    package mutating func string(utf8: UnsafeRawBufferPointer) {
        bytes.append(UInt8(ascii: "\""))
        if !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            bytes.append(contentsOf: utf8)
        } else {
            for byte in utf8 { escape(byte) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// `member` (`,"key":`) and the value, when there is one: the contract omits an absent optional.
    /// An array of strings, `["a","b"]`.
    package mutating func strings(_ values: [String]) {
        raw("[")
        for (index, value) in values.enumerated() {
            if index > 0 { raw(",") }
            string(value)
        }
        raw("]")
    }

    package mutating func optional(_ member: StaticString, _ value: (some JSONScalar)?) {
        guard let value else { return }
        raw(member)
        value.write(into: &self)
    }

    private mutating func escape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): raw("\\\"")
        case UInt8(ascii: "\\"): raw("\\\\")
        case 0x08: raw("\\b")
        case 0x0C: raw("\\f")
        case 0x0A: raw("\\n")
        case 0x0D: raw("\\r")
        case 0x09: raw("\\t")
        case 0..<0x20:
            let hexDigits: StaticString = "0123456789abcdef"
            raw("\\u00")
            bytes.append(hexDigits.utf8Start[Int(byte >> 4)])
            bytes.append(hexDigits.utf8Start[Int(byte & 0xF)])
        default: bytes.append(byte)
        }
    }
}

/// A value `JSONBytes` writes as one JSON scalar (a date as RFC 3339 text, a uuid as lower-case text).
package protocol JSONScalar {
    func write(into out: inout JSONBytes)
}

extension Date: JSONScalar {
    package func write(into out: inout JSONBytes) { out.date(self) }
}

extension UUID: JSONScalar {
    package func write(into out: inout JSONBytes) { out.uuid(self) }
}

extension String: JSONScalar {
    package func write(into out: inout JSONBytes) { out.string(self) }
}

extension Int64: JSONScalar {
    package func write(into out: inout JSONBytes) { out.integer(self) }
}

extension Double: JSONScalar {
    package func write(into out: inout JSONBytes) { out.number(self) }
}
