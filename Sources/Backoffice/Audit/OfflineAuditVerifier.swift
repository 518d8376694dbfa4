import Foundation
import BackofficePlatform

/// Verifies an audit export (`audit export`, JSON lines) on the client, trusting nothing the
/// server says: for every line it checks that the fields shown are exactly the ones hashed
/// (`canonical`: byte for byte by `ExportLine` for a line as `audit export` wrote it, else as
/// values), recomputes `hash = SHA-256(prev_hash ‖ canonical)`, follows each chain's links from
/// its genesis, and at the end compares the chain ends with a (signed) checkpoint.
///
/// The export is either whole (every chain starts at seq 1) or continues from `start`: the heads
/// sealed for the period before it (`audit verify --offline --from`), so a day's export is
/// verified from where the previous day's signed heads left each chain. Memory is one verifier per
/// chain, whatever the export's length (the export is in id order, which within a chain is seq order).
package struct OfflineAuditVerifier {
    private var chains: InterleavedChainVerifier
    private var malformed: ChainFailure?
    package private(set) var lines = 0

    package init(checkpoint: [ChainHead] = [], start: [ChainHead] = []) {
        chains = InterleavedChainVerifier(checkpoint: checkpoint, start: start)
    }

    /// Feeds one line of the export (empty lines are skipped).
    package mutating func feed(line: some Collection<UInt8>) {
        guard malformed == nil, !line.allSatisfy({ $0 == 10 || $0 == 13 || $0 == 32 }) else { return }
        lines += 1
        let bytes = Array(line)
        guard let event = bytes.withUnsafeBytes({ ExportLine.event($0) }) ?? Self.event(from: Data(bytes)) else {
            malformed = ChainFailure(
                chain: "?", seq: nil, eventID: nil, kind: .edited,
                detail: "line \(lines) is not an exported event (not JSON, or fields missing)")
            return
        }
        chains.feed(event)
    }

    /// The first failure (the lowest event id among the chains that failed), or nil when every
    /// chain is whole and reaches at least the checkpoint's heads; and where every chain ends
    /// (`heads`: the start of the next period's verification, chains without events carried over).
    package mutating func finish() -> (failure: ChainFailure?, chains: Int, events: Int64, heads: [ChainHead]) {
        let result = chains.finish()
        let first = [malformed, result.failure].compactMap { $0 }.min { ($0.eventID ?? .max) < ($1.eventID ?? .max) }
        return (first, result.chains, result.events, result.heads)
    }

    /// One exported line as the chain verifier sees it. `recomputed` equals `canonical` only when
    /// the fields shown on the line are exactly those hashed, so an edited field is caught even
    /// when the hash was left alone.
    static func event(from line: Data) -> ChainedEvent? {
        guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any],
            let id = integer(object["id"]), let chain = object["chain"] as? String,
            let seq = integer(object["seq"]), let canonical = object["canonical"] as? String,
            let prev = (object["prev_hash"] as? String).flatMap(bytes(hex:)),
            let hash = (object["hash"] as? String).flatMap(bytes(hex:))
        else { return nil }
        var shown = object
        for key in ["id", "canonical", "prev_hash", "hash"] { shown[key] = nil }
        let hashed = (try? JSONSerialization.jsonObject(with: Data(canonical.utf8)) as? [String: Any]) ?? [:]
        let canonicalBytes = Array(canonical.utf8)
        let matches = !hashed.isEmpty && NSDictionary(dictionary: withoutNulls(shown)).isEqual(to: withoutNulls(hashed))
        return ChainedEvent(
            id: id, chain: chain, seq: seq, canonical: canonicalBytes, recomputed: matches ? canonicalBytes : [],
            prevHash: prev, hash: hash)
    }

    /// The object's fields, nulls dropped (an absent and a null field say the same), compared as
    /// values (deep `NSDictionary` equality: serializing with sorted keys compared keys through
    /// ICU collation, 450 µs a line).
    private static func withoutNulls(_ object: [String: Any]) -> [String: Any] {
        object.filter { !($0.value is NSNull) }
    }

    private static func integer(_ value: Any?) -> Int64? {
        switch value {
        case let number as Int: Int64(number)
        case let number as Int64: number
        case let number as NSNumber: number.int64Value
        default: nil
        }
    }
}
