import ArgumentParser
import BackofficeAPI
import Foundation
import OpenAPIRuntime

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
        abstract: "The append-only, hash-chained audit log: list, export, verify, checkpoint.",
        discussion: "Example: backoffice audit verify --checkpoint audit-heads.json",
        subcommands: [List.self, Export.self, Verify.self, Checkpoint.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List events, oldest first.", discussion: "Example: backoffice audit list --action accounts.lock --since 2026-11-01T00:00:00Z")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @OptionGroup var filter: AuditFilterOptions
        @Option(help: "Page size (1–500, default 50).") var limit: Int?
        @Option(help: "The next_cursor of a previous page.") var cursor: String?

        func run() async throws {
            try await runCommand {
                let output = try await global.client().listAuditEvents(
                    query: .init(
                        limit: limit, cursor: cursor, tenantId: filter.tenant, actorId: filter.actor, action: filter.action, targetId: filter.target,
                        since: try parseTime(filter.since, "--since"), until: try parseTime(filter.until, "--until")))
                switch output {
                case .ok(let ok): try Printer(format: global.format).page(ok.body.json, columns: auditColumns)
                case .default(let status, let problem): throw CLIFailure.from(status, problem)
                }
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
                case .ok(let ok):
                    let body = try ok.body.applicationJsonl
                    let handle: FileHandle
                    if let file {
                        guard FileManager.default.createFile(atPath: file, contents: nil) else { throw CLIFailure.usage("cannot write \(file)") }
                        handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
                    } else {
                        handle = FileHandle.standardOutput
                    }
                    let progress = file != nil && isatty(STDERR_FILENO) == 1
                    var lines = 0
                    for try await chunk in body {
                        handle.write(Data(chunk))
                        if progress {
                            lines += chunk.reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
                            FileHandle.standardError.write(Data("\rexported \(lines) events".utf8))
                        }
                    }
                    if progress { FileHandle.standardError.write(Data("\n".utf8)) }
                    if file != nil { try handle.close() }
                case .default(let status, let problem): throw CLIFailure.from(status, problem)
                }
            }
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify every chain; exit 8 naming the first bad event when one was edited, deleted, inserted or reordered.",
            discussion: "Example: backoffice audit verify --checkpoint audit-heads.json")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "A file written by `audit checkpoint`: also fail when a chain is shorter than, or diverges from, it.") var checkpoint: String?

        func run() async throws {
            try await runCommand {
                var kept: Components.Schemas.Checkpoint?
                if let checkpoint {
                    guard let data = FileManager.default.contents(atPath: checkpoint) else { throw CLIFailure.usage("cannot read \(checkpoint)") }
                    let decoder = JSONDecoder()
                    decoder.dateDecodingStrategy = .iso8601
                    do { kept = try decoder.decode(Components.Schemas.Checkpoint.self, from: data) } catch {
                        throw CLIFailure(message: "error: \(checkpoint) is not a checkpoint written by `audit checkpoint`: \(error)", exitCode: 6)
                    }
                }
                switch try await global.client().verifyAudit(body: .json(.init(checkpoint: kept))) {
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
    }

    struct Checkpoint: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write every chain's head (seq, hash) to a file, to keep outside the database.",
            discussion: "Example: backoffice audit checkpoint --file audit-heads.json")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "Where to write the checkpoint.") var file: String

        func run() async throws {
            try await runCommand {
                switch try await global.client().listAuditHeads() {
                case .ok(let ok):
                    let checkpoint = try ok.body.json
                    let encoder = Printer.encoder
                    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                    try encoder.encode(checkpoint).write(to: URL(fileURLWithPath: file))
                    print("kept \(checkpoint.heads.count) chain heads in \(file)")
                case .default(let status, let problem): throw CLIFailure.from(status, problem)
                }
            }
        }
    }
}

struct Maintenance: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Housekeeping.", discussion: "Example: backoffice maintenance purge --dry-run", subcommands: [Purge.self])

    struct Purge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Purge accounts soft-deleted longer ago than policies/retention.yaml allows (audited).",
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
                        print(
                            "\(report.dryRun ? "would purge" : "purged") \(report.purged.count) accounts deleted more than \(report.retentionDays ?? 0) days ago"
                        )
                        report.purged.forEach { print("  \($0)") }
                    } else {
                        try Printer(format: global.format).single(report, columns: ["dry_run", "retention_days", "purged"])
                    }
                case .default(let status, let problem): throw CLIFailure.from(status, problem)
                }
            }
        }
    }
}
