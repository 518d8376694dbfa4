import Foundation

/// Lower-case hex of bytes: the one encoder (digests, signatures, generated passwords, entity tags).
package func hex(_ bytes: some Sequence<UInt8>) -> String {
    var text = ""
    for byte in bytes {
        text.append(hexDigits[Int(byte >> 4)])
        text.append(hexDigits[Int(byte & 0x0F)])
    }
    return text
}

/// The bytes that `text` writes in hex (either case), or nil when it is not an even run of hex digits.
package func bytes(hex text: String) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var out: [UInt8] = []
    out.reserveCapacity(digits.count / 2)
    for index in stride(from: 0, to: digits.count, by: 2) {
        guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
        out.append(high << 4 | low)
    }
    return out
}

private let hexDigits: [Character] = Array("0123456789abcdef")

private func nibble(_ c: UInt8) -> UInt8? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
    default: nil
    }
}
