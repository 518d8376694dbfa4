import BackofficeAPI
import BackofficePlatform
import Foundation
import OpenAPIRuntime

extension ModerationCase {
    func api(author: AuthorHistory? = nil, holderEmail: String? = nil) throws -> Components.Schemas.ModerationCase {
        .init(
            id: id.text, contentKind: try .init(known: contentKind.rawValue), contentId: contentID,
            contentText: contentText, authorId: authorID?.text, openedBy: try .init(known: origin.rawValue),
            severity: severity, matchedRules: matchedRules, status: isOpen ? .open : .decided,
            reportCount: reportCount, assignedTo: assignedTo?.text, assignedToEmail: holderEmail,
            assignedUntil: assignedUntil, openedAt: openedAt, decidedAt: decidedAt, overturnedAt: overturnedAt,
            version: version,
            author: author.map {
                .init(
                    upheldCases: $0.upheldCases, recentUpheldCases: $0.recentUpheldCases, locks: $0.locks,
                    repeatOffender: $0.repeatOffender)
            })
    }
}

extension QueuedCase {
    var api: Components.Schemas.ModerationCase {
        get throws { try moderationCase.api(author: author, holderEmail: holderEmail) }
    }
}

extension StatementOfReasons {
    var api: Components.Schemas.StatementOfReasons {
        get throws {
            .init(
                decisionId: decisionID.text, caseId: caseID.text, contentKind: try .init(known: contentKind.rawValue),
                contentId: contentID, authorId: authorID?.text, decision: try .init(known: decision.rawValue),
                removesContent: removesContent, accountLocked: accountLocked, facts: facts,
                grounds: grounds.map { .init(code: $0.code, label: $0.label, section: $0.section) },
                explanation: explanation, automatedDetection: automatedDetection, automatedDecision: automatedDecision,
                decidedAt: decidedAt, redress: redress, policyDigest: policyDigest)
        }
    }
}

extension ForumContent {
    init(kind: Components.Schemas.ContentKind, id: String, text: String, author: String) throws {
        self.init(
            kind: try .init(known: kind.rawValue), id: id, text: text, authorID: try parseID(author, "author_id"))
    }
}

extension ModerationPolicy.OffenderThreshold {
    init(_ api: Components.Schemas.OffenderThreshold) { self.init(upheldCases: api.upheldCases, days: api.days) }
    var api: Components.Schemas.OffenderThreshold { .init(upheldCases: upheldCases, days: days) }
}

extension APIHandler {
    func screenContent(_ input: Operations.ScreenContent.Input) async throws -> Operations.ScreenContent.Output {
        let body: Components.Schemas.ScreenRequest = try json(input.body)
        let content = try ForumContent(
            kind: body.contentKind, id: body.contentId, text: body.text, author: body.authorId)
        let result = try await change(ScreenContent(content), body: body) { outcome in
            Components.Schemas.ScreenResult(
                action: try .init(known: outcome.verdict.action.rawValue), ruleIds: outcome.verdict.ruleIDs,
                maskedText: outcome.verdict.maskedText, caseId: outcome.caseID?.text,
                policyDigest: outcome.policyDigest)
        }
        return .ok(.init(body: .json(result)))
    }

    func reportContent(_ input: Operations.ReportContent.Input) async throws -> Operations.ReportContent.Output {
        let body: Components.Schemas.ReportCreate = try json(input.body)
        let content = try ForumContent(
            kind: body.contentKind, id: body.contentId, text: body.text, author: body.authorId)
        let operation = ReportContent(
            content, reporterID: try parseID(body.reporterId, "reporter_id"), reason: body.reason)
        let result = try await change(operation, body: body) { outcome in
            Components.Schemas.ReportResult(
                caseId: outcome.moderationCase.id.text, reportCount: outcome.moderationCase.reportCount,
                severity: outcome.moderationCase.severity, counted: outcome.counted,
                status: outcome.moderationCase.isOpen ? .open : .decided)
        }
        return .ok(.init(body: .json(result)))
    }

    func moderationQueue(_ input: Operations.ModerationQueue.Input) async throws -> Operations.ModerationQueue.Output {
        let limit = try pageLimit(input.query.limit)
        let after = try Cursor.decode(input.query.cursor, count: 3).map { parts in
            guard let severity = Int(parts[0]), let micros = Int64(parts[1]), let id = UUID(uuidString: parts[2]) else {
                throw DomainError.invalid("cursor", "invalid_cursor", "pass back a next_cursor unchanged")
            }
            return (severity: severity, openedAt: Cursor.time(micros), id: id)
        }
        let rows = try await read(ModerationQueue(after: after, limit: limit + 1))
        let (items, next) = keysetPage(rows, limit: limit) {
            [String($0.moderationCase.severity)]
                + Cursor.timeAndID($0.moderationCase.openedAt, $0.moderationCase.id)
        }
        return .ok(.init(body: .json(.init(items: try items.map { try $0.api }, nextCursor: next))))
    }

    func getModerationCase(_ input: Operations.GetModerationCase.Input) async throws
        -> Operations.GetModerationCase.Output
    {
        let detail = try await read(ReadModerationCase(caseID: try parseID(input.path.caseId, "case_id")))
        let policy = try context().policies.moderation
        let statements = detail.decisions.map {
            StatementOfReasons($0, on: detail.queued.moderationCase, policy: policy)
        }
        return .ok(
            .init(
                headers: .init(eTag: EntityTag.of(Int64(detail.queued.moderationCase.version))),
                body: .json(
                    .init(
                        _case: try detail.queued.api,
                        reports: detail.reports.map {
                            .init(reporterId: $0.reporterID.text, reason: $0.reason, reportedAt: $0.reportedAt)
                        }, statements: try statements.map { try $0.api }))))
    }

    func takeModerationCase(_ input: Operations.TakeModerationCase.Input) async throws
        -> Operations.TakeModerationCase.Output
    {
        let id = try parseID(input.path.caseId, "case_id")
        let taken = try await change(TakeCase(caseID: id), on: id, body: String?.none) { try $0.api() }
        return .ok(.init(body: .json(taken)))
    }

    func decideModerationCase(_ input: Operations.DecideModerationCase.Input) async throws
        -> Operations.DecideModerationCase.Output
    {
        let body: Components.Schemas.ModerationDecisionCreate = try json(input.body)
        let id = try parseID(input.path.caseId, "case_id")
        let policy = try context().policies.moderation
        let operation = DecideCase(
            caseID: id, kind: try .init(known: body.decision.rawValue), ground: body.ground,
            explanation: body.explanation, lockUntil: body.lockUntil, ifMatch: input.headers.ifMatch)
        let statement = try await change(operation, on: id, body: body, status: 201) { decided in
            try StatementOfReasons(decided.decision, on: decided.moderationCase, policy: policy).api
        }
        return .created(.init(body: .json(statement)))
    }

    func listStatementsOfReasons(_ input: Operations.ListStatementsOfReasons.Input) async throws
        -> Operations.ListStatementsOfReasons.Output
    {
        let statements = try await read(ReadStatements(caseID: try parseID(input.path.caseId, "case_id")))
        return .ok(.init(body: .json(.init(items: try statements.map { try $0.api }))))
    }

    func listModerationRemovals(_ input: Operations.ListModerationRemovals.Input) async throws
        -> Operations.ListModerationRemovals.Output
    {
        let since = input.query.since ?? 0
        let removals = try await read(ListRemovals(since: since, limit: try pageLimit(input.query.limit)))
        let items = try removals.map {
            Components.Schemas.Removal(
                seq: $0.seq, decisionId: $0.decisionID.text, caseId: $0.caseID.text,
                contentKind: try .init(known: $0.contentKind.rawValue), contentId: $0.contentID,
                decision: try .init(known: $0.decision.rawValue), decidedAt: $0.decidedAt)
        }
        return .ok(.init(body: .json(.init(items: items, nextSince: removals.last?.seq ?? since))))
    }

    func exportStatementsOfReasons(_ input: Operations.ExportStatementsOfReasons.Input) async throws
        -> Operations.ExportStatementsOfReasons.Output
    {
        let until = input.query.until ?? now.addingTimeInterval(1)  // up to now, inclusive
        let since = input.query.since ?? until.addingTimeInterval(-30 * 86_400)
        let context = try context()
        let first = try await database.read(ExportStatements(from: since, to: until), context: context)
        let pages = try ExportStatements.pages(
            first: first, from: since, to: until, database: database, context: context)
        return .ok(.init(body: .applicationJsonl(HTTPBody(pages, length: .unknown, iterationBehavior: .single))))
    }

    func setOffenderThreshold(_ input: Operations.SetOffenderThreshold.Input) async throws
        -> Operations.SetOffenderThreshold.Output
    {
        let body: Components.Schemas.OffenderThreshold = try json(input.body)
        let saved = try await change(OffenderThresholdChange(.init(body)), body: body) { $0.api }
        return .ok(.init(body: .json(saved)))
    }

    func dryRunOffenderThreshold(_ input: Operations.DryRunOffenderThreshold.Input) async throws
        -> Operations.DryRunOffenderThreshold.Output
    {
        let body: Components.Schemas.OffenderThreshold = try json(input.body)
        let run = try await read(DryRunOffenderThreshold(.init(body)))
        return .ok(
            .init(
                body: .json(
                    .init(
                        days: run.days, proposed: run.proposed.api, flaggedAuthors: run.flagged,
                        current: run.current.api, currentlyFlaggedAuthors: run.currentlyFlagged))))
    }
}
