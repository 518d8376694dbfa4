import ArgumentParser
import Backoffice
import BackofficeAPI
import Foundation
import OpenAPIRuntime
import PostgresNIO

/// Filters shared by `audit list` and `audit export`.
struct AuditFilterOptions: ParsableArguments {
    @Option(help: "Only this tenant's events.") var tenant: String?
    @Option(help: "Only this actor's events.") var actor: String?
    @Option(help: "Only this action (e.g. accounts.lock).") var action: String?
    @Option(help: "Only events about this target id.") var target: String?
    @Option(help: "From this RFC 3339 time (inclusive).") var since: String?
    @Option(help: "Before this RFC 3339 time.") var until: String?
}

struct Audit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The append-only, hash-chained audit log: list, export, verify, signed checkpoints.",
        discussion: "Example: backoffice audit verify --checkpoint audit-heads.json --public-key audit.pub",
        subcommands: [List.self, Export.self, Verify.self, Checkpoint.self, Keygen.self, Archive.self, SignFile.self, VerifyFile.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List events, oldest first.", discussion: "Example: backoffice audit list --action accounts.lock --since 2026-11-01T00:00:00Z")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @OptionGroup var filter: AuditFilterOptions
        @OptionGroup(title: "Paging") var page: PageOptions

        func run() async throws {
            try await global.show(.page(auditColumns)) { client in
                try await client.listAuditEvents(
                    query: .init(
                        limit: page.limit, cursor: page.cursor, tenantId: filter.tenant, actorId: filter.actor, action: filter.action,
                        targetId: filter.target,
                        since: try parseTime(filter.since, "--since"), until: try parseTime(filter.until, "--until")))
            }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Export every matching event as JSON lines, streamed (constant memory).",
            discussion: "Example: backoffice audit export --since 2026-11-01T00:00:00Z --file audit-november.jsonl")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @OptionGroup var filter: AuditFilterOptions
        @Option(help: "Write to this file instead of stdout.") var file: String?

        func run() async throws {
            try await runCommand {
                let output = try await global.client().exportAuditEvents(
                    query: .init(
                        tenantId: filter.tenant, actorId: filter.actor, action: filter.action, targetId: filter.target,
                        since: try parseTime(filter.since, "--since"), until: try parseTime(filter.until, "--until")))
                switch output {
                case .ok(let ok): try await Transfer.download(try ok.body.applicationJsonl, to: file, counting: "events")
                case .default(let status, let problem): throw CLIFailure.from(status, problem)
                }
            }
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify every chain; exit 8 naming the first bad event when one was edited, deleted, inserted or reordered.",
            discussion: """
                Online, the service verifies its own log. With --offline, this command recomputes every \
                hash itself from a whole export (`audit export --file F`), trusting nothing the server says; \
                with --checkpoint and --public-key it also checks the export reaches a signed checkpoint's \
                heads (a checkpoint whose signature does not verify is refused, exit 8). \
                An export of one period (`audit export --since --until`) is verified from the heads sealed \
                for the period before it (--from, signed); --seal then writes where this period leaves \
                every chain, signed with your key, for the next period to start from (ops/audit-daily \
                does this every day).
                Examples:
                  backoffice audit verify --checkpoint audit-heads.json --public-key audit.pub
                  backoffice audit verify --offline audit.jsonl --checkpoint audit-heads.json --public-key audit.pub
                  backoffice audit verify --offline audit-2026-11-22.jsonl --from audit-2026-11-21.heads.json \
                --public-key audit.pub --seal audit-2026-11-22.heads.json --signing-key audit.key
                """)
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "A file written by `audit checkpoint`: also fail when a chain is shorter than, or diverges from, it.") var checkpoint: String?
        @Option(help: "The checkpoint signer's public key (from `audit keygen`): refuse a checkpoint it did not sign.") var publicKey: String?
        @Option(help: ArgumentHelp("Verify this export (JSON lines) here, without the service.", valueName: "export.jsonl")) var offline: String?
        @Option(
            help: ArgumentHelp(
                "With --offline: the signed heads the previous period was sealed with; the export continues every chain from them.",
                valueName: "heads.json")) var from: String?
        @Option(
            help: ArgumentHelp(
                "With --offline: when the export verifies, write where it leaves every chain here, signed (never overwrites).",
                valueName: "heads.json")) var seal: String?
        @Option(help: "Ed25519 private key file to sign the seal with (env BACKOFFICE_AUDIT_SIGNING_KEY).") var signingKey: String?

        func validate() throws {
            if offline != nil && (checkpoint != nil || from != nil) && publicKey == nil {
                throw ValidationError("--offline with --checkpoint or --from needs --public-key: unsigned heads prove nothing offline")
            }
            if offline == nil && (from != nil || seal != nil) { throw ValidationError("--from and --seal verify an export: give --offline FILE") }
            if seal != nil && signingKeyFile(signingKey) == nil {
                throw ValidationError("--seal needs --signing-key (or BACKOFFICE_AUDIT_SIGNING_KEY)")
            }
        }

        func run() async throws {
            try await runCommand {
                let kept = try checkpoint.map(loadSigned)
                if let offline {
                    try verifyOffline(offline, checkpoint: kept?.heads ?? [], start: try from.map(loadSigned)?.heads ?? [])
                    return
                }
                let heads = kept.map {
                    Components.Schemas.Checkpoint(takenAt: Date(), heads: $0.heads.map { .init(chain: $0.chain, seq: $0.seq, hash: $0.hash) })
                }
                switch try await global.client().verifyAudit(body: .json(.init(checkpoint: heads))) {
                case .ok(let ok):
                    let report = try ok.body.json
                    if global.format == .table {
                        if let failure = report.failure {
                            print("TAMPERED: \(failure.kind.rawValue) — \(failure.detail)")
                            if let id = failure.eventId {
                                print("first bad event: \(id) (chain \(failure.chain), seq \(failure.seq.map(String.init) ?? "-"))")
                            }
                        } else {
                            print("intact: \(report.events) events in \(report.chains) chains")
                        }
                    } else {
                        try Printer(format: global.format).single(report, columns: ["intact", "chains", "events"])
                    }
                    if !report.intact { throw ExitCode(8) }
                case .default(let status, let problem): throw CLIFailure.from(status, problem)
                }
            }
        }

        /// A checkpoint file, its signature checked when a public key is given (exit 8 when it does not verify).
        private func loadSigned(_ checkpoint: String) throws -> AuditCheckpoint {
            guard let data = FileManager.default.contents(atPath: checkpoint) else { throw CLIFailure.usage("cannot read \(checkpoint)") }
            let kept: AuditCheckpoint
            do { kept = try JSONDecoder().decode(AuditCheckpoint.self, from: data) } catch {
                throw CLIFailure(message: "error: \(checkpoint) is not a checkpoint written by `audit checkpoint`: \(error)", exitCode: 6)
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
            if let seal, FileManager.default.fileExists(atPath: seal) { throw CLIFailure.usage("\(seal) exists: a seal is never overwritten") }
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
                if let id = failure.eventID { print("first bad event: \(id) (chain \(failure.chain), seq \(failure.seq.map(String.init) ?? "-"))") }
                throw ExitCode(8)
            }
            print(
                "intact (verified offline): \(events) events in \(chains) chains" + (start.isEmpty ? "" : ", continuing the signed heads")
                    + (checkpoint.isEmpty ? "" : ", reaching the signed checkpoint"))
            if let seal {
                let key = try loadSigningKey(signingKeyFile(signingKey) ?? "")
                try AuditCheckpoint(takenAt: RFC3339DateTranscoder.format(Date()), heads: heads).signed(with: key).write(to: seal)
                print("sealed \(heads.count) chain heads in \(seal), signed")
            }
        }
    }

    struct Archive: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move audit events older than the retention period out of the database, into the signed daily archives.",
            discussion: """
                Finds the newest day in --archive-dir sealed by ops/audit-daily that ended at least \
                audit_events.keep_days (policies/retention.yaml) ago, checks its seal's signature, and \
                removes from the database every chain's events up to the sealed heads, in one \
                transaction, recording the cut: `audit verify` then continues each chain from it, and an \
                export of what remains verifies offline with `--from` that day's seal. A head the \
                database does not hold exactly is refused (exit 8) and nothing is removed. Runs as the \
                tables' owner (the service's role cannot delete audit events); the archival is audited.
                Example: BACKOFFICE_ADMIN_DATABASE_URL=postgres://owner@db/backoffice backoffice audit archive \
                --archive-dir /archive/audit --public-key audit.pub --dry-run
                """)
        @Option(help: "Owner's database URL (env BACKOFFICE_ADMIN_DATABASE_URL).") var databaseURL: String?
        @OptionGroup var project: ProjectOptions
        @Option(help: "The folder ops/audit-daily writes (audit-DAY.jsonl and audit-DAY.heads.json).") var archiveDir: String
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
                    print("nothing to archive: no day sealed in \(archiveDir) ended \(keepDays) days ago (audit_events.keep_days)")
                    return
                }
                let key = try loadPublicKey(publicKey)
                let seal: AuditCheckpoint
                do { seal = try JSONDecoder().decode(AuditCheckpoint.self, from: Data(contentsOf: day.file)) } catch {
                    throw CLIFailure(message: "error: \(day.file.path) is not a seal written by ops/audit-daily: \(error)", exitCode: 6)
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
                                through: seal.heads, day: day.day, policyDigest: policies.digest, on: connection, logger: logger)
                    }
                } catch let error as PSQLError where error.serverInfo?[.sqlState] == "22000" {
                    throw CLIFailure(
                        message: "REFUSED: \(error.serverInfo?[.message] ?? "the database diverges from the archive"); nothing was removed",
                        exitCode: 8)
                }
                let total = removed.reduce(0) { $0 + $1.events }
                print(
                    dryRun
                        ? "would archive through \(day.day): \(total) events in \(removed.count) chains"
                        : "archived through \(day.day): \(total) events in \(removed.count) chains left the database (in \(archiveDir))")
            }
        }
    }

    struct Checkpoint: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write every chain's head (seq, hash) to a file kept outside the database, signed with your Ed25519 key.",
            discussion: """
                The private key (from `audit keygen`) stays with you; it is never sent to the service.
                Example: backoffice audit checkpoint --file audit-heads.json --signing-key audit.key
                """)
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "Where to write the checkpoint.") var file: String
        @Option(help: "Ed25519 private key file to sign with (env BACKOFFICE_AUDIT_SIGNING_KEY).") var signingKey: String?

        func run() async throws {
            try await runCommand {
                let key = try signingKeyFile(signingKey).map(loadSigningKey)
                switch try await global.client().listAuditHeads() {
                case .ok(let ok):
                    let heads = try ok.body.json
                    var checkpoint = AuditCheckpoint(
                        takenAt: RFC3339DateTranscoder.format(heads.takenAt),
                        heads: heads.heads.map { ChainHead(chain: $0.chain, seq: $0.seq, hash: $0.hash) })
                    if let key { checkpoint = try checkpoint.signed(with: key) }
                    try checkpoint.write(to: file)
                    print(
                        "kept \(checkpoint.heads.count) chain heads in \(file)"
                            + (key == nil ? " (unsigned: pass --signing-key to sign)" : ", signed"))
                case .default(let status, let problem): throw CLIFailure.from(status, problem)
                }
            }
        }
    }

    struct Keygen: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an Ed25519 key pair for signing checkpoints (private key file mode 0600).",
            discussion: "Example: backoffice audit keygen --private-key audit.key --public-key audit.pub")
        @Option(help: "Where to write the private key (must not exist).") var privateKey: String
        @Option(help: "Where to write the public key (give it to whoever verifies).") var publicKey: String

        func run() async throws {
            try await runCommand {
                do { _ = try AuditSigningKey.generate(privateKeyFile: privateKey, publicKeyFile: publicKey) } catch {
                    throw CLIFailure(message: "error: \(error)", exitCode: 6)
                }
                print("private key \(privateKey) (keep it offline), public key \(publicKey)")
            }
        }
    }
}

extension Audit {
    struct SignFile: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sign-file",
            abstract: "Sign a file (a backup's SHA256SUMS) with the audit key: a detached signature in FILE.sig.",
            discussion: "Example: backoffice audit sign-file SHA256SUMS --signing-key audit.key")
        @Argument(help: "The file to sign.") var file: String
        @Option(help: "Ed25519 private key file to sign with (env BACKOFFICE_AUDIT_SIGNING_KEY).") var signingKey: String?
        @Option(help: "Where to write the signature (default: FILE.sig).") var signature: String?

        func run() async throws {
            try await runCommand {
                guard let keyFile = signingKeyFile(signingKey) else {
                    throw CLIFailure(message: "error: --signing-key (or BACKOFFICE_AUDIT_SIGNING_KEY) is required", exitCode: 64)
                }
                let key = try loadSigningKey(keyFile)
                let contents = try readWhole(file)
                let out = signature ?? file + ".sig"
                try Data(try FileSignature.sign(contents, with: key).utf8).write(to: URL(fileURLWithPath: out))
                print("signed \(file): \(out)")
            }
        }
    }

    struct VerifyFile: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify-file",
            abstract: "Check a file's detached signature (from `audit sign-file`) with the audit public key. Exit 8 when it does not match.",
            discussion: "Example: backoffice audit verify-file SHA256SUMS --public-key audit.pub")
        @Argument(help: "The signed file.") var file: String
        @Option(help: "The signer's public key (from `audit keygen`).") var publicKey: String
        @Option(help: "The signature (default: FILE.sig).") var signature: String?

        func run() async throws {
            try await runCommand {
                let key = try loadPublicKey(publicKey)
                let signatureFile = signature ?? file + ".sig"
                let signed = String(decoding: try readWhole(signatureFile), as: UTF8.self)
                guard FileSignature.isValid(signed, of: try readWhole(file), publicKey: key) else {
                    throw CLIFailure(message: "REFUSED: \(signatureFile) is not \(publicKey)'s signature of \(file)", exitCode: 8)
                }
                print("\(file): signature good (\(publicKey))")
            }
        }
    }
}

/// A whole file's bytes; a missing or unreadable file stops the command (exit 6).
private func readWhole(_ file: String) throws -> Data {
    guard let data = FileManager.default.contents(atPath: file) else { throw CLIFailure(message: "error: cannot read \(file)", exitCode: 6) }
    return data
}

struct Maintenance: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Housekeeping.", discussion: "Example: backoffice maintenance purge --dry-run", subcommands: [Purge.self])

    struct Purge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Apply policies/retention.yaml: purge old deleted accounts, expired idempotency records, old login attempts (audited).",
            discussion: "Example: backoffice maintenance purge --dry-run")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Flag(help: "Only list what would be purged.") var dryRun = false

        func run() async throws {
            try await runCommand {
                let output = try await global.client().purgeDeletedAccounts(
                    headers: .init(idempotencyKey: global.changeKey()), body: .json(.init(dryRun: dryRun)))
                switch output {
                case .ok(let ok):
                    let report = try ok.body.json
                    if global.format == .table {
                        let verb = report.dryRun ? "would purge" : "purged"
                        print("\(verb) \(report.purged.count) accounts deleted more than \(report.retentionDays ?? 0) days ago")
                        report.purged.forEach { print("  \($0)") }
                        print("\(verb) \(report.idempotencyKeys) expired idempotency records, \(report.loginAttempts) old login attempts")
                    } else {
                        try Printer(format: global.format).single(
                            report, columns: ["dry_run", "retention_days", "purged", "idempotency_keys", "login_attempts"])
                    }
                case .default(let status, let problem): throw CLIFailure.from(status, problem)
                }
            }
        }
    }
}

/// The checkpoint signing key's file: the option, else `BACKOFFICE_AUDIT_SIGNING_KEY`.
private func signingKeyFile(_ option: String?) -> String? {
    option ?? ProcessInfo.processInfo.environment["BACKOFFICE_AUDIT_SIGNING_KEY"]
}

/// The public key in `file`; an unreadable key stops the command with exit code 6.
private func loadPublicKey(_ file: String) throws -> AuditPublicKey {
    do { return try AuditSigningKey.publicKey(file: file) } catch { throw CLIFailure(message: "error: \(error)", exitCode: 6) }
}

/// The signing key in `file`; an unreadable key stops the command with exit code 6.
private func loadSigningKey(_ file: String) throws -> AuditPrivateKey {
    do { return try AuditSigningKey.privateKey(file: file) } catch { throw CLIFailure(message: "error: \(error)", exitCode: 6) }
}
