import Foundation

/// Base64url without padding (RFC 4648 §5), as cursors and token secrets are written.
package enum Base64URL {
    package static func encode(_ data: Data) -> String {
        var bytes = Array(data.base64EncodedData())
        while bytes.last == UInt8(ascii: "=") { bytes.removeLast() }
        for index in bytes.indices {
            switch bytes[index] {
            case UInt8(ascii: "+"): bytes[index] = UInt8(ascii: "-")
            case UInt8(ascii: "/"): bytes[index] = UInt8(ascii: "_")
            default: break
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether `byte` is one of base64url's 64 characters (no padding).
    package static func isAlphabet(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }

    /// The base64url text's bytes; nil when it is not base64url.
    package static func decode(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }

    /// `count` bytes from the system's cryptographic random source, as base64url.
    package static func random(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return encode(Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }))
    }

    /// The bytes base64url writes (no padding).
    package static let alphabet: Set<UInt8> = Set(
        Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8))
}
