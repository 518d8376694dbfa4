import Foundation

extension UUID {
    /// Lower-case text, as ids appear in the API and the audit log (`uuidString.lowercased()`,
    /// written digit by digit: Foundation's formats through `snprintf`, and a list's entity tag
    /// writes one for each of its rows).
    package var text: String {
        withUnsafeBytes(of: uuid) { raw in
            String(unsafeUninitializedCapacity: 36) { out in
                let digits: StaticString = "0123456789abcdef"
                var at = 0
                for (index, byte) in raw.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        out[at] = UInt8(ascii: "-")
                        at += 1
                    }
                    out[at] = digits.utf8Start[Int(byte >> 4)]
                    out[at + 1] = digits.utf8Start[Int(byte & 0x0F)]
                    at += 2
                }
                return at
            }
        }
    }

    /// The id as two big-endian words, ordered as PostgreSQL orders uuids (byte by byte): the
    /// order rows are locked in, computed without text.
    package var orderKey: (UInt64, UInt64) {
        withUnsafeBytes(of: uuid) { raw in
            (
                UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        }
    }
}
