import Foundation

extension UUID {
    /// Lower-case text, as ids appear in the API and the audit log.
    package var text: String { uuidString.lowercased() }

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
