import Foundation
import Testing

/// The three-machine deployment's files (`ops/systemd/`) and the one-machine topology the fault
/// suite proves (`ops/lib/cluster.py`) hold the same settings: a change to one that the other
/// lacks fails here, so what `ops/faults` measured is what a deployment runs.
@Suite("ops/systemd's Patroni and haproxy files run the settings ops/cluster proves")
struct DeploymentFilesTests {
    static let root = projectRoot.path

    static func read(_ file: String) throws -> String {
        try String(contentsOfFile: "\(root)/\(file)", encoding: .utf8)
    }

    /// The lines of `text` from the line after the one equal to `start` up to the first that
    /// starts with `end` (both trimmed of spaces at their right).
    static func block(of text: String, after start: String, until end: String) -> [String] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let first = lines.firstIndex(where: { $0 == start }) else { return [] }
        let rest = lines[(first + 1)...]
        return Array(rest.prefix { !$0.hasPrefix(end) })
    }

    @Test("Patroni's bootstrap DCS settings (synchronous, strict, no pg_rewind, archiving) are the same lines in both")
    func patroniSettings() throws {
        let topology = try Self.read("ops/lib/cluster.py")
            .replacingOccurrences(of: "{STANZA}", with: "backoffice")
        let proven = Self.block(of: topology, after: "  dcs:", until: "{pitr}")
        let deployed = Set(
            Self.block(of: try Self.read("ops/systemd/patroni.yml"), after: "  dcs:", until: "  initdb:"))
        #expect(proven.count > 15, "the DCS block of ops/lib/cluster.py was found: \(proven)")
        #expect(proven.contains("    synchronous_mode_strict: true") && proven.contains("      use_pg_rewind: false"))
        let missing = proven.filter { !deployed.contains($0) }
        #expect(missing.isEmpty, "ops/systemd/patroni.yml lacks what ops/faults proves: \(missing)")
    }

    @Test("haproxy's checks, timeouts and retries of the PostgreSQL and API sections are the same in both")
    func haproxySettings() throws {
        let topology = try Self.read("ops/lib/cluster.py")
        let section = Self.block(of: topology, after: "    def start_haproxy(self):", until: "    # serve")
        let kept = ["option ", "http-check ", "default-server ", "retries ", "retry-on ", "timeout "]
        let proven = Set(
            section.map { $0.trimmingCharacters(in: .whitespaces) }.filter { line in
                kept.contains { line.hasPrefix($0) }
            })
        let deployed = Set(
            try Self.read("ops/systemd/haproxy.cfg").split(separator: "\n").map {
                $0.trimmingCharacters(in: .whitespaces)
            })
        #expect(proven.contains("option httpchk GET {check}") && proven.contains("option httpchk GET /readyz"))
        let missing = proven.subtracting(deployed).subtracting(["option httpchk GET {check}"])
        #expect(missing.isEmpty, "ops/systemd/haproxy.cfg lacks what ops/faults proves: \(missing.sorted())")
        for check in ["/primary", "/replica"] {
            #expect(deployed.contains("option httpchk GET \(check)"), "haproxy.cfg checks Patroni's \(check)")
        }
    }
}
