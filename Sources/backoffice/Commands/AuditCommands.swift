import ArgumentParser
import Backoffice
import BackofficeAPI
import BackofficePlatform
import Foundation
import OpenAPIRuntime
import PostgresNIO

extension Audit {
    struct Archive: AsyncParsableCommand {
        @Option(help: "Owner's database URL (env BACKOFFICE_ADMIN_DATABASE_URL).") var databaseURL: String?
        @OptionGroup var project: ProjectOptions
        @Option(help: "The folder ops/audit-daily writes (audit-DAY.jsonl and audit-DAY.heads.json).") var archiveDir:
            String
        @Option(help: "The public key the daily seals are checked with.") var publicKey: String
        @Flag(help: "Only show what would be removed.") var dryRun = false

        func run() async throws {
            try await runServerCommand {
                let policies = try project.loadPolicies()
                let keepDays = policies.retention.auditEventsKeepDays
                let days: [AuditArchive.SealedDay]
                do { days = try AuditArchive.sealedDays(in: URL(fileURLWithPath: archiveDir)) } catch {
                    throw CLIFailure.usage("cannot read \(archiveDir): \(error.localizedDescription)")
                }
                guard let day = AuditArchive.dayToArchive(days, keepDays: keepDays, now: Date()) else {
                    print(
                        """
                        nothing to archive: no day sealed in \(archiveDir) ended \(keepDays) days ago \
                        (audit_events.keep_days)
                        """
                    )
                    return
                }
                let key = try loadPublicKey(publicKey)
                let seal: AuditCheckpoint
                do { seal = try JSONDecoder().decode(AuditCheckpoint.self, from: Data(contentsOf: day.file)) } catch {
                    throw CLIFailure(
                        message: "error: \(day.file.path) is not a seal written by ops/audit-daily: \(error)",
                        exitCode: 6)
                }
                if let problem = seal.signatureProblem(publicKey: key) {
                    throw CLIFailure(message: "REFUSED: \(day.file.path): \(problem)", exitCode: 8)
                }
                let url = try resolveDatabaseURL(databaseURL, env: ["BACKOFFICE_ADMIN_DATABASE_URL"])
                let logger = makeLogger()
                let removed: [AuditArchive.Removal]
                do {
                    removed = try await url.withConnection(logger: logger) { connection in
                        dryRun
                            ? try await AuditArchive.preview(through: seal.heads, on: connection, logger: logger)
                            : try await AuditArchive.cut(
                                through: seal.heads, day: day.day, policyDigest: policies.digest, on: connection,
                                logger: logger)
                    }
                } catch let error as PSQLError where error.serverInfo?[.sqlState] == "22000" {
                    throw CLIFailure(
                        message:
                            "REFUSED: \(error.serverInfo?[.message] ?? "the database diverges from the archive"); "
                            + "nothing was removed",
                        exitCode: 8)
                }
                let total = removed.reduce(0) { $0 + $1.events }
                print(
                    dryRun
                        ? "would archive through \(day.day): \(total) events in \(removed.count) chains"
                        : """
                        archived through \(day.day): \(total) events in \(removed.count) chains left the database \
                        (in \(archiveDir))
                        """
                )
            }
        }
    }

    struct Checkpoint: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "Where to write the checkpoint.") var file: String
        @Option(help: "Ed25519 private key file to sign with (env BACKOFFICE_AUDIT_SIGNING_KEY).") var signingKey:
            String?

        func run() async throws {
            try await runCommand {
                let key = try signingKeyFile(signingKey).map(loadSigningKey)
                let ok = try answered(try await global.client().listAuditHeads()).ok
                let heads = try ok.body.json
                var checkpoint = AuditCheckpoint(
                    takenAt: RFC3339DateTranscoder.format(heads.takenAt),
                    heads: heads.heads.map { ChainHead(chain: $0.chain, seq: $0.seq, hash: $0.hash) })
                if let key { checkpoint = try checkpoint.signed(with: key) }
                try checkpoint.write(to: file)
                print(
                    "kept \(checkpoint.heads.count) chain heads in \(file)"
                        + (key == nil ? " (unsigned: pass --signing-key to sign)" : ", signed"))
            }
        }
    }
}
