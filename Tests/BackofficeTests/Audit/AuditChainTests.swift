import Crypto
import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// Builds a valid chain of `count` events in memory.
func makeChain(_ chain: String = "platform:00", count: Int) -> [ChainedEvent] {
    var previous = AuditChain.genesis
    return (1...count).map { seq in
        let canonical = Array("{\"seq\":\(seq)}".utf8)
        let hash = AuditChain.link(previous: previous, canonical: canonical)
        defer { previous = hash }
        return ChainedEvent(
            id: Int64(seq * 10), chain: chain, seq: Int64(seq), canonical: canonical, recomputed: canonical,
            prevHash: previous, hash: hash)
    }
}

func verify(_ events: [ChainedEvent], heads: [ChainHead] = [], checkpoint: [ChainHead] = []) -> ChainFailure? {
    var verifier = ChainVerifier(checkpoint: checkpoint)
    events.forEach { verifier.feed($0) }
    return verifier.finish(heads: heads, checkpoint: checkpoint)
}

@Suite("Audit chain rules (pure)")
struct AuditChainTests {
    @Test("hash = SHA-256(prev_hash ‖ canonical)")
    func link() {
        let previous = [UInt8](repeating: 7, count: 32)
        let canonical = Array("event".utf8)
        #expect(
            AuditChain.link(previous: previous, canonical: canonical) == Array(SHA256.hash(data: previous + canonical)))
    }

    @Test("platform events spread over lanes by target; tenant events share their tenant's chain")
    func lanes() {
        let lanes = Set((0..<200).map { AuditChain.chain(tenantID: platformTenantID, targetID: "customer-\($0)") })
        #expect(lanes.count == AuditChain.platformLanes)
        #expect(
            AuditChain.chain(tenantID: platformTenantID, targetID: "x")
                == AuditChain.chain(tenantID: platformTenantID, targetID: "x"))
        let tenant = UUID()
        #expect(AuditChain.chain(tenantID: tenant, targetID: "a") == "tenant:\(tenant.uuidString.lowercased())")
        #expect(AuditChain.chain(tenantID: tenant, targetID: "b") == AuditChain.chain(tenantID: tenant, targetID: "a"))
    }

    @Test("an intact chain verifies")
    func intact() {
        let events = makeChain(count: 5)
        #expect(verify(events, heads: [ChainHead(chain: "platform:00", seq: 5, hash: hex(events[4].hash))]) == nil)
    }

    @Test("an edited column is named")
    func editedColumn() {
        var events = makeChain(count: 5)
        let original = Array("{\"seq\":3}".utf8)
        events[2] = ChainedEvent(
            id: 30, chain: "platform:00", seq: 3, canonical: original,
            recomputed: Array("{\"seq\":3,\"reason\":\"forged\"}".utf8),
            prevHash: events[2].prevHash, hash: events[2].hash)
        let failure = verify(events)
        #expect(failure?.kind == .edited)
        #expect(failure?.eventID == 30)
    }

    @Test("edited canonical bytes break the hash")
    func editedBytes() {
        var events = makeChain(count: 5)
        let rewritten = Array("{\"seq\":2,\"x\":1}".utf8)
        events[1] = ChainedEvent(
            id: 20, chain: "platform:00", seq: 2, canonical: rewritten, recomputed: rewritten,
            prevHash: events[1].prevHash, hash: events[1].hash)
        #expect(verify(events)?.kind == .edited)
        #expect(verify(events)?.eventID == 20)
    }

    @Test("a deleted event leaves a gap named at the event after it")
    func deleted() {
        var events = makeChain(count: 5)
        events.remove(at: 2)
        let failure = verify(events)
        #expect(failure?.kind == .deleted)
        #expect(failure?.eventID == 40)
    }

    @Test("an inserted event is named even when it is correctly linked")
    func inserted() {
        let events = makeChain(count: 5)
        let canonical = Array("{\"forged\":true}".utf8)
        let forged = ChainedEvent(
            id: 99, chain: "platform:00", seq: 3, canonical: canonical, recomputed: canonical, prevHash: events[1].hash,
            hash: AuditChain.link(previous: events[1].hash, canonical: canonical))
        var tampered =
            Array(events[0..<2]) + [forged]
            + events[2...].map { event in
                var shifted = event
                shifted.seq += 1
                return shifted
            }
        tampered.sort { $0.seq < $1.seq }
        let failure = verify(tampered)
        #expect(failure?.kind == .inserted)
        #expect(failure?.eventID == 99)
    }

    @Test("swapped events are reported as reordered")
    func reordered() {
        var events = makeChain(count: 5)
        events.swapAt(1, 2)
        let failure = verify(events)
        #expect(failure?.kind == .reordered)
        #expect(failure?.eventID == 30)
    }

    @Test("deleting the newest events is caught by the heads table and by a checkpoint")
    func truncated() {
        let events = makeChain(count: 5)
        let kept = [ChainHead(chain: "platform:00", seq: 5, hash: hex(events[4].hash))]
        #expect(verify(Array(events.prefix(3)), heads: kept)?.kind == .truncated)
        #expect(verify(Array(events.prefix(3)), checkpoint: kept)?.kind == .truncated)
        #expect(verify(events, checkpoint: kept) == nil)
    }

    @Test("a chain rewritten from the start diverges from a checkpoint")
    func diverged() {
        let events = makeChain(count: 5)
        let kept = [ChainHead(chain: "platform:00", seq: 3, hash: hex(events[2].hash))]
        var previous = AuditChain.genesis
        let rewritten = (1...5).map { seq in
            let canonical = Array("{\"seq\":\(seq),\"rewritten\":1}".utf8)
            let hash = AuditChain.link(previous: previous, canonical: canonical)
            defer { previous = hash }
            return ChainedEvent(
                id: Int64(seq * 10 + 1), chain: "platform:00", seq: Int64(seq), canonical: canonical,
                recomputed: canonical, prevHash: previous,
                hash: hash)
        }
        #expect(verify(rewritten, checkpoint: kept)?.kind == .diverged)
    }
}
