import BackofficePlatform
import Crypto
import Foundation

/// The pure rules of the hash-chained audit log: which chain an event joins, how links are hashed,
/// and how a chain is verified. No I/O.
package enum AuditChain {
    /// The number of lanes the platform's own events are spread over.
    package static let platformLanes = 16

    /// The hash a chain starts from.
    package static let genesis = [UInt8](repeating: 0, count: 32)

    /// The chain an event joins: its tenant's chain, or for the platform a lane chosen by target, so
    /// changes to different targets rarely wait on one chain head. `audit_append` (SQL) makes this
    /// choice when it appends; this is the same rule, for tools and tests that need to know it.
    package static func chain(tenantID: UUID, targetID: String) -> String {
        guard tenantID == platformTenantID else { return "tenant:\(tenantID.uuidString.lowercased())" }
        let digest = SHA256.hash(data: Data(targetID.utf8))
        let lane = Int(digest.first { _ in true } ?? 0) % platformLanes
        return String(format: "platform:%02d", lane)
    }

    /// `hash = SHA-256(prev_hash ‖ canonical)`.
    package static func link(previous: [UInt8], canonical: [UInt8]) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: previous)
        hasher.update(data: canonical)
        return Array(hasher.finalize())
    }
}

/// One stored event as the verifier sees it: its place, its links, and whether its content still
/// matches what was hashed.
package struct ChainedEvent: Sendable {
    package var id: Int64
    package var chain: String
    package var seq: Int64
    package var prevHash: [UInt8]
    package var hash: [UInt8]
    /// The event's columns still give the canonical bytes stored with it (false when a column was
    /// edited and the stored bytes left alone).
    package var columnsMatch: Bool
    /// SHA-256(prev_hash ‖ stored canonical bytes) is the stored hash.
    package var hashMatches: Bool

    package init(
        id: Int64, chain: String, seq: Int64, prevHash: [UInt8], hash: [UInt8], columnsMatch: Bool, hashMatches: Bool
    ) {
        (self.id, self.chain, self.seq, self.prevHash, self.hash, self.columnsMatch, self.hashMatches) = (
            id, chain, seq, prevHash, hash, columnsMatch, hashMatches
        )
    }

    /// An event from its stored `canonical` bytes and the bytes `recomputed` from its columns.
    package init(
        id: Int64, chain: String, seq: Int64, canonical: [UInt8], recomputed: [UInt8], prevHash: [UInt8], hash: [UInt8]
    ) {
        self.init(
            id: id, chain: chain, seq: seq, prevHash: prevHash, hash: hash, columnsMatch: canonical == recomputed,
            hashMatches: AuditChain.link(previous: prevHash, canonical: canonical) == hash)
    }
}

/// What is wrong with a chain, naming the first bad event.
package struct ChainFailure: Sendable, Equatable, Error {
    package enum Kind: String, Sendable {
        case edited, deleted, inserted, reordered, truncated, diverged
    }
    package let chain: String
    package let seq: Int64?
    package let eventID: Int64?
    package let kind: Kind
    package let detail: String
}

/// A chain head as kept outside the database (a checkpoint) or in `audit_chain_heads`.
package struct ChainHead: Sendable, Equatable, Codable {
    package let chain: String
    package let seq: Int64
    package let hash: String

    package init(chain: String, seq: Int64, hash: String) {
        (self.chain, self.seq, self.hash) = (chain, seq, hash)
    }
}

/// Verifies chains from events fed in (chain, seq) order, in constant memory (one event of lookahead).
///
/// Detects an edited event (its columns no longer match its canonical bytes, or its hash no longer
/// matches them), a deleted event (a gap in the links), an inserted event (the chain is whole
/// without it) and reordered events (two links swapped). Deleting the newest events leaves no
/// broken link: `finish(heads:checkpoint:)` compares the chain ends with the heads and a checkpoint.
package struct ChainVerifier: Sendable {
    private var pending: ChainedEvent?
    private var currentChain: String?
    private var lastHash: [UInt8] = AuditChain.genesis
    private var hashBeforeLast: [UInt8]?
    private var lastEvent: ChainedEvent?
    private var expectedSeq: Int64 = 1
    /// Where the current chain ends so far, and the seq its checkpoint keeps (looked up once per
    /// chain, not per event).
    private var currentEnd: (seq: Int64, hash: [UInt8])?
    private var currentCheckpointSeq: Int64?
    /// Where the other chains end.
    private var otherEnds: [String: (seq: Int64, hash: [UInt8])] = [:]
    private var seen: [String: [Int64: [UInt8]]] = [:]
    private var checkpointSeqs: [String: Int64]
    private let start: [String: (seq: Int64, hash: [UInt8])]
    package private(set) var events: Int64 = 0
    package private(set) var failure: ChainFailure?

    /// - Parameters:
    ///   - checkpoint: kept heads; the hash at each kept seq is remembered while streaming.
    ///   - start: where chains were left by the events verified before these (the previous day's
    ///     sealed heads, or an archive's cut): such a chain continues at `seq + 1` from `hash`
    ///     and its head stays there when none of its events follow; every other chain must start
    ///     at seq 1 from the genesis hash.
    package init(checkpoint: [ChainHead] = [], start startHeads: [ChainHead] = []) {
        checkpointSeqs = Dictionary(checkpoint.map { ($0.chain, $0.seq) }, uniquingKeysWith: { first, _ in first })
        var start = [String: (seq: Int64, hash: [UInt8])]()
        for head in startHeads where start[head.chain] == nil {
            start[head.chain] = (head.seq, bytes(hex: head.hash) ?? [])
        }
        self.start = start
        otherEnds = start
    }

    /// Where every chain ends so far.
    private var ends: [String: (seq: Int64, hash: [UInt8])] {
        guard let currentChain, let currentEnd else { return otherEnds }
        var ends = otherEnds
        ends[currentChain] = currentEnd
        return ends
    }

    /// The number of chains seen (or carried over from `start`).
    package var chains: Int { ends.count }

    /// Where every chain ends after the events fed (chains of `start` with no events stay where
    /// they were), by chain: what the next period's verification starts from.
    package var heads: [ChainHead] {
        ends.sorted { $0.key < $1.key }.map { ChainHead(chain: $0.key, seq: $0.value.seq, hash: hex($0.value.hash)) }
    }

    /// Feeds the next event. After the first failure the rest is ignored.
    package mutating func feed(_ event: ChainedEvent) {
        guard failure == nil else { return }
        if let previous = pending { check(previous, next: event.chain == previous.chain ? event : nil) }
        pending = event
    }

    /// Ends the stream and checks chain ends against the database's heads and a kept checkpoint.
    package mutating func finish(heads: [ChainHead], checkpoint: [ChainHead]) -> ChainFailure? {
        if failure == nil, let last = pending { check(last, next: nil) }
        pending = nil
        if failure != nil { return failure }
        let ends = self.ends
        for head in heads {
            let end = ends[head.chain]
            if end?.seq != head.seq || end.map({ hex($0.hash) }) != head.hash {
                failure = ChainFailure(
                    chain: head.chain, seq: end?.seq, eventID: nil, kind: .truncated,
                    detail:
                        """
                        the chain ends at seq \(end?.seq ?? 0) but its head records seq \(head.seq): its newest \
                        events were deleted
                        """
                )
                return failure
            }
        }
        for kept in checkpoint {
            guard let end = ends[kept.chain], end.seq >= kept.seq else {
                failure = ChainFailure(
                    chain: kept.chain, seq: ends[kept.chain]?.seq, eventID: nil, kind: .truncated,
                    detail:
                        "the chain is shorter (seq \(ends[kept.chain]?.seq ?? 0)) than the checkpoint (seq \(kept.seq))"
                )
                return failure
            }
            let keptHash =
                seen[kept.chain]?[kept.seq] ?? (start[kept.chain]?.seq == kept.seq ? start[kept.chain]?.hash : nil)
            if let hash = keptHash, hex(hash) != kept.hash {
                failure = ChainFailure(
                    chain: kept.chain, seq: kept.seq, eventID: nil, kind: .diverged,
                    detail: "the event at seq \(kept.seq) has hash \(hex(hash)) but the checkpoint kept \(kept.hash)")
                return failure
            }
        }
        return nil
    }

    private mutating func check(_ event: ChainedEvent, next: ChainedEvent?) {
        if event.chain != currentChain {
            if let currentChain, let currentEnd { otherEnds[currentChain] = currentEnd }
            currentEnd = nil
            currentCheckpointSeq = checkpointSeqs[event.chain]
            currentChain = event.chain
            let origin = start[event.chain] ?? (0, AuditChain.genesis)
            lastHash = origin.hash
            hashBeforeLast = nil
            lastEvent = nil
            expectedSeq = origin.seq + 1
        }
        events += 1
        if event.prevHash != lastHash {
            if let next, next.hash == event.prevHash, next.prevHash == lastHash {
                fail(event, .reordered, "its link points at the event after it: events were swapped")
            } else if let next, next.prevHash == lastHash {
                fail(event, .inserted, "the chain is whole without it: it was inserted")
            } else if let hashBeforeLast, event.prevHash == hashBeforeLast, let lastEvent {
                fail(lastEvent, .inserted, "the event after it links past it: it was inserted")
            } else {
                fail(event, .deleted, "its prev_hash does not match the event before it: an event before it is missing")
            }
            return
        }
        if event.seq != expectedSeq {
            fail(event, .reordered, "seq \(event.seq) where \(expectedSeq) was expected")
            return
        }
        if !event.columnsMatch {
            fail(event, .edited, "its columns no longer match the bytes that were hashed")
            return
        }
        if !event.hashMatches {
            fail(event, .edited, "its hash does not match its content")
            return
        }
        hashBeforeLast = lastHash
        lastHash = event.hash
        lastEvent = event
        expectedSeq = event.seq + 1
        currentEnd = (event.seq, event.hash)
        if currentCheckpointSeq == event.seq { seen[event.chain, default: [:]][event.seq] = event.hash }
    }

    private mutating func fail(_ event: ChainedEvent, _ kind: ChainFailure.Kind, _ detail: String) {
        failure = ChainFailure(
            chain: event.chain, seq: event.seq, eventID: event.id, kind: kind,
            detail: "event \(event.id) (\(event.chain) seq \(event.seq)): \(detail)")
    }
}

/// Verifies every chain of a stream that keeps each chain in seq order but interleaves chains (the
/// table's and an export's id order: appends to a chain take its head's lock before they draw an
/// id, so within a chain ids grow with seq), one `ChainVerifier` per chain, so memory grows with
/// the number of chains, not of events.
package struct InterleavedChainVerifier: Sendable {
    private var verifiers: [String: ChainVerifier] = [:]
    private let checkpoint: [String: [ChainHead]]
    private let start: [String: [ChainHead]]

    /// - Parameters: as `ChainVerifier`'s, for every chain.
    package init(checkpoint: [ChainHead] = [], start: [ChainHead] = []) {
        self.checkpoint = Dictionary(grouping: checkpoint, by: \.chain)
        self.start = Dictionary(grouping: start, by: \.chain)
    }

    /// Feeds the next event.
    package mutating func feed(_ event: ChainedEvent) {
        let (checkpoint, start) = (self.checkpoint, self.start)
        verifiers[
            event.chain,
            default: ChainVerifier(checkpoint: checkpoint[event.chain] ?? [], start: start[event.chain] ?? [])
        ].feed(event)
    }

    /// Ends the stream. Every chain seen, kept by the checkpoint, or recorded in `heads` (the
    /// database's heads table; none for an export) is checked as `ChainVerifier.finish` checks
    /// one; the first failure is the one with the lowest event id. Also answers where every chain
    /// ends (chains of `start` without events stay where they were).
    package mutating func finish(heads: [ChainHead] = []) -> (
        failure: ChainFailure?, chains: Int, events: Int64, heads: [ChainHead]
    ) {
        let recorded = Dictionary(grouping: heads, by: \.chain)
        var failures: [ChainFailure] = []
        var events: Int64 = 0
        var ends = Dictionary(
            start.values.flatMap { $0 }.map { ($0.chain, $0) }, uniquingKeysWith: { first, _ in first })
        for chain in Set(verifiers.keys).union(checkpoint.keys).union(recorded.keys).sorted() {
            var verifier =
                verifiers[chain] ?? ChainVerifier(checkpoint: checkpoint[chain] ?? [], start: start[chain] ?? [])
            if let failure = verifier.finish(heads: recorded[chain] ?? [], checkpoint: checkpoint[chain] ?? []) {
                failures.append(failure)
            }
            events += verifier.events
            for head in verifier.heads { ends[head.chain] = head }
        }
        let first = failures.min { ($0.eventID ?? .max) < ($1.eventID ?? .max) }
        return (first, ends.count, events, ends.values.sorted { $0.chain < $1.chain })
    }
}
