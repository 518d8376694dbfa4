import ArgumentParser
import Backoffice
import BackofficeAPI
import BackofficePlatform
import Foundation
import OpenAPIRuntime
import PostgresNIO

extension Audit {
    struct Verify: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(
            help: "A file written by `audit checkpoint`: also fail when a chain is shorter than, or diverges from, it.")
        var checkpoint: String?
        @Option(help: "The checkpoint signer's public key (from `audit keygen`): refuse a checkpoint it did not sign.")
        var publicKey: String?
        @Option(
            help: ArgumentHelp("Verify this export (JSON lines) here, without the service.", valueName: "export.jsonl"))
        var offline: String?
        @Option(
            help: ArgumentHelp(
                """
                With --offline: the signed heads the previous period was sealed with; the export continues every \
                chain from them.
                """,
                valueName: "heads.json")) var from: String?
        @Option(
            help: ArgumentHelp(
                """
                With --offline: when the export verifies, write where it leaves every chain here, signed (never \
                overwrites).
                """,
                valueName: "heads.json")) var seal: String?
        @Option(help: "Ed25519 private key file to sign the seal with (env BACKOFFICE_AUDIT_SIGNING_KEY).")
        var signingKey: String?

        func validate() throws {
            if offline != nil && (checkpoint != nil || from != nil) && publicKey == nil {
                throw ValidationError(
                    "--offline with --checkpoint or --from needs --public-key: unsigned heads prove nothing offline")
            }
            if offline == nil && (from != nil || seal != nil) {
                throw ValidationError("--from and --seal verify an export: give --offline FILE")
            }
            if seal != nil && signingKeyFile(signingKey) == nil {
                throw ValidationError("--seal needs --signing-key (or BACKOFFICE_AUDIT_SIGNING_KEY)")
            }
        }

        func run() async throws {
            try await runCommand {
                let kept = try checkpoint.map(loadSigned)
                if let offline {
                    try verifyOffline(
                        offline, checkpoint: kept?.heads ?? [], start: try from.map(loadSigned)?.heads ?? [])
                    return
                }
                let heads = kept.map {
                    Components.Schemas.Checkpoint(
                        takenAt: Date(), heads: $0.heads.map { .init(chain: $0.chain, seq: $0.seq, hash: $0.hash) })
                }
                let ok = try answered(try await global.client().verifyAudit(body: .json(.init(checkpoint: heads)))).ok
                let report = try ok.body.json
                if global.format == .table {
                    if let failure = report.failure {
                        print("TAMPERED: \(failure.kind.rawValue) — \(failure.detail)")
                        if let id = failure.eventId {
                            print(
                                """
                                first bad event: \(id) (chain \(failure.chain), seq \
                                \(failure.seq.map(String.init) ?? "-"))
                                """
                            )
                        }
                    } else {
                        print("intact: \(report.events) events in \(report.chains) chains")
                    }
                } else {
                    try Printer(format: global.format).single(report, columns: ["intact", "chains", "events"])
                }
                if !report.intact { throw ExitCode(8) }
            }
        }

        /// A checkpoint file, its signature checked when a public key is given (exit 8 when it does not verify).
        private func loadSigned(_ checkpoint: String) throws -> AuditCheckpoint {
            guard let data = FileManager.default.contents(atPath: checkpoint) else {
                throw CLIFailure.usage("cannot read \(checkpoint)")
            }
            let kept: AuditCheckpoint
            do { kept = try JSONDecoder().decode(AuditCheckpoint.self, from: data) } catch {
                throw CLIFailure(
                    message: "error: \(checkpoint) is not a checkpoint written by `audit checkpoint`: \(error)",
                    exitCode: 6)
            }
            if let publicKey {
                let key = try loadPublicKey(publicKey)
                if let problem = kept.signatureProblem(publicKey: key) {
                    throw CLIFailure(message: "REFUSED: \(checkpoint): \(problem)", exitCode: 8)
                }
            }
            return kept
        }

        private func verifyOffline(_ path: String, checkpoint: [ChainHead], start: [ChainHead]) throws {
            guard let handle = FileHandle(forReadingAtPath: path) else { throw CLIFailure.usage("cannot read \(path)") }
            defer { try? handle.close() }
            if let seal, FileManager.default.fileExists(atPath: seal) {
                throw CLIFailure.usage("\(seal) exists: a seal is never overwritten")
            }
            var verifier = OfflineAuditVerifier(checkpoint: checkpoint, start: start)
            var pending: [UInt8] = []
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                pending.append(contentsOf: chunk)
                var start = 0
                while let newline = pending[start...].firstIndex(of: 10) {
                    verifier.feed(line: pending[start..<newline])
                    start = newline + 1
                }
                pending.removeFirst(start)
            }
            verifier.feed(line: pending)
            let (failure, chains, events, heads) = verifier.finish()
            if let failure {
                print("TAMPERED: \(failure.kind.rawValue) — \(failure.detail)")
                if let id = failure.eventID {
                    print("first bad event: \(id) (chain \(failure.chain), seq \(failure.seq.map(String.init) ?? "-"))")
                }
                throw ExitCode(8)
            }
            print(
                "intact (verified offline): \(events) events in \(chains) chains"
                    + (start.isEmpty ? "" : ", continuing the signed heads")
                    + (checkpoint.isEmpty ? "" : ", reaching the signed checkpoint"))
            if let seal {
                let key = try loadSigningKey(signingKeyFile(signingKey) ?? "")
                try AuditCheckpoint(takenAt: RFC3339DateTranscoder.format(Date()), heads: heads).signed(with: key)
                    .write(to: seal)
                print("sealed \(heads.count) chain heads in \(seal), signed")
            }
        }
    }
}
