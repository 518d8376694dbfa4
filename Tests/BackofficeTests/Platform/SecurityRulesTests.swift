import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Security rules (pure)")
struct SecurityRulesTests {
    @Test("database URLs are printed without their password, whatever it holds")
    func urlRedaction() {
        #expect(DatabaseURL.redact("postgres://app:s3cret@db:5432/bo") == "postgres://app:***@db:5432/bo")
        #expect(
            DatabaseURL.redact("postgres://app:p@ss:w/rd?x@db/bo?sslmode=require")
                == "postgres://app:***@db/bo?sslmode=require")
        #expect(DatabaseURL.redact("postgres://app@db/bo") == "postgres://app@db/bo")
        #expect(!DatabaseURL.redact("postgresql://u:%40pw@h/d").contains("pw"))
    }

    @Test("CSV cells that a spreadsheet would run are neutralised; table cells lose escapes and control characters")
    func safeText() {
        #expect(SafeText.csvCell("=HYPERLINK(\"http://evil\")") == "\"'=HYPERLINK(\"\"http://evil\"\")\"")
        for start in ["+", "-", "@", "\t"] { #expect(SafeText.csvCell(start + "1+A1") == "'" + start + "1+A1") }
        #expect(SafeText.csvCell("-50") == "-50", "a negative number is a number, not a formula")
        #expect(SafeText.csvCell("-2.5") == "-2.5")
        #expect(SafeText.csvCell("ada@example.com") == "ada@example.com")
        #expect(SafeText.csvCell("a,b") == "\"a,b\"")
        // What a cell writes, csvValue reads back exactly: apostrophes of the value's own included.
        for value in ["=1+2", "'=1+2", "''@x", "'5", "'", "-50", "-cmd", "'-cmd", "plain", "it's"] {
            let cell = SafeText.csvCell(value)
            #expect(
                SafeText.csvValue(cell.hasPrefix("\"") ? String(cell.dropFirst().dropLast()) : cell) == value,
                "\(value) → \(cell)")
        }
        #expect(SafeText.csvCell("'=1+2") == "''=1+2")
        #expect(SafeText.terminal("\u{1B}[31mred\u{1B}[0m") == "red")
        #expect(SafeText.terminal("\u{1B}]0;owned\u{07}title") == "title")
        #expect(SafeText.terminal("line\nbreak\u{7}") == "line break ")
        #expect(SafeText.terminal("Zoë") == "Zoë")
    }

    @Test("X-Forwarded-For: only behind trusted proxies, the nearest untrusted hop")
    func clientAddress() throws {
        let resolver = ClientAddress(trustedProxies: [try CIDR("10.0.0.0/8"), try CIDR("::1")])
        #expect(resolver.resolve(peer: "10.1.2.3", forwardedFor: "198.51.100.1, 10.9.9.9") == "198.51.100.1")
        #expect(
            resolver.resolve(peer: "10.1.2.3", forwardedFor: "6.6.6.6, 198.51.100.1") == "198.51.100.1",
            "a client cannot prepend itself")
        #expect(
            resolver.resolve(peer: "192.0.2.1", forwardedFor: "198.51.100.1") == "192.0.2.1",
            "an untrusted peer is recorded as itself")
        #expect(resolver.resolve(peer: "::1", forwardedFor: "2001:db8::1") == "2001:db8::1")
        #expect(resolver.resolve(peer: "10.1.2.3", forwardedFor: "not-an-address") == "10.1.2.3")
        #expect(throws: CIDR.Invalid.self) { try CIDR("10.0.0.0/33") }
        #expect(throws: CIDR.Invalid.self) { try CIDR("example.com") }
    }

    @Test("a checkpoint verifies only with its signer's key and only unaltered")
    func checkpointSignature() throws {
        let key = AuditPrivateKey()
        let heads = [ChainHead(chain: "platform:00", seq: 4, hash: String(repeating: "ab", count: 32))]
        let signed = try AuditCheckpoint(takenAt: "2026-11-22T00:00:00.000Z", heads: heads).signed(with: key)
        #expect(signed.signatureProblem(publicKey: key.publicKey) == nil)
        #expect(signed.signatureProblem(publicKey: AuditPrivateKey().publicKey) != nil)
        var altered = signed
        altered.heads = [ChainHead(chain: "platform:00", seq: 3, hash: heads[0].hash)]
        #expect(altered.signatureProblem(publicKey: key.publicKey) != nil)
        #expect(
            AuditCheckpoint(takenAt: "x", heads: heads).signatureProblem(publicKey: key.publicKey)
                == "the checkpoint is not signed")
    }
}
