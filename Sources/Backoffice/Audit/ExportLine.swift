import Crypto
import BackofficePlatform

/// The fast reading of an exported audit line, as `audit export` writes it: jsonb's text form, in
/// which every member's value is written exactly as the event's canonical text writes it. The line's
/// members are found without building objects, the canonical text is assembled from their raw
/// bytes in jsonb's key order, and when that equals the line's `canonical` byte for byte, the
/// fields shown are the fields hashed.
///
/// Anything else — a line reformatted by another tool, an unknown or repeated member, a field that
/// differs — is not decided here (`event` answers nil) but by the full reading, which compares the
/// fields as values.
enum ExportLine {
    /// Every member a line may hold: the canonical's columns, then the event's id, links and text.
    private static let known = Set(
        AuditCanonical.Column.allCases.map(\.key) + ["id", "prev_hash", "hash", "canonical"])

    /// The event on `line` when the fast reading decides it matches; nil otherwise.
    static func event(_ line: UnsafeRawBufferPointer) -> ChainedEvent? {
        guard let members = members(line), members.count <= known.count else { return nil }
        var values: [String: Range<Int>] = [:]
        values.reserveCapacity(members.count)
        for (key, value) in members {
            let name = String(decoding: UnsafeRawBufferPointer(rebasing: line[key]), as: UTF8.self)
            guard known.contains(name), values.updateValue(value, forKey: name) == nil else { return nil }
        }
        func raw(_ name: String) -> UnsafeRawBufferPointer? {
            values[name].map { UnsafeRawBufferPointer(rebasing: line[$0]) }
        }
        guard let id = raw("id").flatMap(integer), let prev = raw("prev_hash").flatMap(string).flatMap(hexBytes),
            let hash = raw("hash").flatMap(string).flatMap(hexBytes), let canonical = raw("canonical").flatMap(string),
            let chain = raw("chain").flatMap(string), let seq = raw("seq").flatMap(integer)
        else { return nil }
        var assembled: [UInt8] = [UInt8(ascii: "{")]
        assembled.reserveCapacity(canonical.count)
        for (column, key) in AuditCanonical.members {
            // A column absent from the line is NULL (`audit export` leaves NULL members out).
            let value = raw(column.key)
            if column.omittedWhenAbsent && value?.elementsEqual("null".utf8) != false { continue }
            if assembled.count > 1 {
                assembled.append(UInt8(ascii: ","))
                assembled.append(UInt8(ascii: " "))
            }
            assembled.append(contentsOf: key)
            if let value { assembled.append(contentsOf: value) } else { assembled.append(contentsOf: "null".utf8) }
        }
        assembled.append(UInt8(ascii: "}"))
        guard assembled == canonical else { return nil }
        return ChainedEvent(
            id: id, chain: String(decoding: chain, as: UTF8.self), seq: seq, prevHash: prev, hash: hash,
            columnsMatch: true,
            hashMatches: AuditChain.link(previous: prev, canonical: canonical) == hash)
    }

    /// The top-level members of a JSON object: each key's bytes (inside its quotes) and its
    /// value's exact bytes; nil when the line is not one object.
    static func members(_ line: UnsafeRawBufferPointer) -> [(key: Range<Int>, value: Range<Int>)]? {
        var index = skipSpace(line, 0)
        guard index < line.count, line[index] == UInt8(ascii: "{") else { return nil }
        var members: [(key: Range<Int>, value: Range<Int>)] = []
        members.reserveCapacity(24)
        index = skipSpace(line, index + 1)
        if index < line.count, line[index] == UInt8(ascii: "}") {
            return skipSpace(line, index + 1) == line.count ? members : nil
        }
        while true {
            guard index < line.count, line[index] == UInt8(ascii: "\""), let keyEnd = stringEnd(line, index) else {
                return nil
            }
            let key = index + 1..<keyEnd - 1
            index = skipSpace(line, keyEnd)
            guard index < line.count, line[index] == UInt8(ascii: ":") else { return nil }
            index = skipSpace(line, index + 1)
            guard let valueEnd = valueEnd(line, index) else { return nil }
            members.append((key, index..<valueEnd))
            index = skipSpace(line, valueEnd)
            guard index < line.count else { return nil }
            if line[index] == UInt8(ascii: "}") { return skipSpace(line, index + 1) == line.count ? members : nil }
            guard line[index] == UInt8(ascii: ",") else { return nil }
            index = skipSpace(line, index + 1)
        }
    }

    private static func skipSpace(_ line: UnsafeRawBufferPointer, _ start: Int) -> Int {
        var index = start
        while index < line.count, isSpace(line[index]) { index += 1 }
        return index
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// The index after the string that opens at `start` (a quote).
    private static func stringEnd(_ line: UnsafeRawBufferPointer, _ start: Int) -> Int? {
        var index = start + 1
        while index < line.count {
            switch line[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): return index + 1
            default: index += 1
            }
        }
        return nil
    }

    /// The index after the value that starts at `start`: a string, an object or array (nested
    /// values and their strings skipped), or a literal or number.
    private static func valueEnd(_ line: UnsafeRawBufferPointer, _ start: Int) -> Int? {
        guard start < line.count else { return nil }
        switch line[start] {
        case UInt8(ascii: "\""):
            return stringEnd(line, start)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var index = start
            while index < line.count {
                switch line[index] {
                case UInt8(ascii: "\""):
                    guard let end = stringEnd(line, index) else { return nil }
                    index = end
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return index + 1 }
                default: break
                }
                index += 1
            }
            return nil
        default:
            var index = start
            while index < line.count, !isSpace(line[index]), line[index] != UInt8(ascii: ","),
                line[index] != UInt8(ascii: "}"),
                line[index] != UInt8(ascii: "]")
            {
                index += 1
            }
            return index > start ? index : nil
        }
    }

    /// A JSON number that is a whole Int64.
    private static func integer(_ raw: UnsafeRawBufferPointer) -> Int64? {
        Int64(String(decoding: raw, as: UTF8.self))
    }

    /// The bytes a JSON string stands for (escapes resolved, `\u` pairs joined into UTF-8); nil when
    /// `raw` is not a well-formed string.
    static func string(_ raw: UnsafeRawBufferPointer) -> [UInt8]? {
        guard raw.count >= 2, raw.first == UInt8(ascii: "\""), raw.last == UInt8(ascii: "\"") else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var index = 1
        let end = raw.count - 1
        while index < end {
            let byte = raw[index]
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                index += 1
                continue
            }
            guard index + 1 < end else { return nil }
            switch raw[index + 1] {
            case UInt8(ascii: "\""): out.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
            case UInt8(ascii: "/"): out.append(UInt8(ascii: "/"))
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                guard var scalar = hexValue(raw, index + 2, end) else { return nil }
                index += 6
                if (0xD800..<0xDC00).contains(scalar) {
                    guard index + 1 < end, raw[index] == UInt8(ascii: "\\"), raw[index + 1] == UInt8(ascii: "u"),
                        let low = hexValue(raw, index + 2, end), (0xDC00..<0xE000).contains(low)
                    else { return nil }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    index += 6
                }
                guard let unicode = Unicode.Scalar(scalar) else { return nil }
                out.append(contentsOf: Array(String(Character(unicode)).utf8))
                continue
            default: return nil
            }
            index += 2
        }
        return out
    }

    private static func hexValue(_ raw: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> UInt32? {
        guard start + 4 <= end else { return nil }
        return UInt32(
            String(decoding: UnsafeRawBufferPointer(rebasing: raw[start..<start + 4]), as: UTF8.self), radix: 16)
    }

    private static func hexBytes(_ text: [UInt8]) -> [UInt8]? {
        bytes(hex: String(decoding: text, as: UTF8.self))
    }
}
