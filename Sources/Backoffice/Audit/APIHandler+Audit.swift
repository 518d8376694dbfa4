import BackofficeAPI
import BackofficePlatform
import Foundation
import NIOCore
import OpenAPIRuntime

extension AuditEventRecord {
    /// The contract's event; a stored snapshot that does not decode throws (never a silent nil).
    var api: Components.Schemas.AuditEvent {
        get throws {
            try apiEvent()
        }
    }

    private func apiEvent() throws -> Components.Schemas.AuditEvent {
        Components.Schemas.AuditEvent(
            id: id, occurredAt: occurredAt, chain: chain, seq: seq, tenantId: tenantID.text, actorId: actorID?.text,
            actorRole: actorRole,
            tokenId: tokenID?.text, sessionId: sessionID?.text, via: .init(rawValue: via),
            action: action, targetType: targetType, targetId: targetID, requestId: requestID, sourceIp: sourceIP,
            reason: reason,
            before: try payload(before, as: Components.Schemas.AuditEvent.BeforePayload.self),
            after: try payload(after, as: Components.Schemas.AuditEvent.AfterPayload.self), policyDigest: policyDigest,
            prevHash: prevHash,
            hash: hash)
    }
}

/// A page of events (fetched with one extra row to know whether another page follows).
func auditPage(_ events: [AuditEventRecord], limit: Int) throws -> Components.Schemas.AuditEventPage {
    let (items, next) = keysetPage(events, limit: limit) { [String($0.id)] }
    return .init(items: try items.map { try $0.api }, nextCursor: next)
}

extension APIHandler {
    private func auditFilter(
        tenantID: String?, actorID: String?, action: String?, targetID: String?, since: Date?, until: Date?
    ) throws
        -> AuditFilter
    {
        AuditFilter(
            tenantID: try parseID(tenantID, "tenant_id"), actorID: try parseID(actorID, "actor_id"), action: action,
            targetID: targetID?.lowercased(),
            since: since, until: until)
    }

    func listAuditEvents(_ input: Operations.ListAuditEvents.Input) async throws -> Operations.ListAuditEvents.Output {
        let q = input.query
        let limit = try pageLimit(q.limit)
        let afterID = try Cursor.number(q.cursor) ?? 0
        let filter = try auditFilter(
            tenantID: q.tenantId, actorID: q.actorId, action: q.action, targetID: q.targetId, since: q.since,
            until: q.until)
        let events = try await read(ListAuditEvents(filter: filter, afterID: afterID, limit: limit + 1))
        return .ok(.init(body: .json(try auditPage(events, limit: limit))))
    }

    func exportAuditEvents(_ input: Operations.ExportAuditEvents.Input) async throws
        -> Operations.ExportAuditEvents.Output
    {
        let q = input.query
        let filter = try auditFilter(
            tenantID: q.tenantId, actorID: q.actorId, action: q.action, targetID: q.targetId, since: q.since,
            until: q.until)
        let lines = try await read(ExportAuditEvents(log: AuditLog(database: database), filter: filter))
        return .ok(.init(body: .applicationJsonl(HTTPBody(lines, length: .unknown, iterationBehavior: .single))))
    }

    func listAuditHeads(_ input: Operations.ListAuditHeads.Input) async throws -> Operations.ListAuditHeads.Output {
        let heads = try await read(ReadAuditHeads())
        return .ok(
            .init(
                body: .json(
                    .init(
                        takenAt: now,
                        heads: heads.map { .init(chain: $0.chain, seq: $0.seq, hash: $0.hash) }))))
    }

    func verifyAudit(_ input: Operations.VerifyAudit.Input) async throws -> Operations.VerifyAudit.Output {
        let body: Components.Schemas.VerifyRequest = try json(input.body)
        let report = try await read(VerifyAuditLog(log: AuditLog(database: database), checkpoint: body.heads))
        // Recorded (and audited) after the verification's own snapshot: the auditor's home shows the last one.
        _ = try await database.run(
            RecordAuditVerification(
                report, checkpointTakenAt: body.heads.isEmpty ? nil : body.checkpoint?.takenAt), context: try context())
        return .ok(.init(body: .json(try report.api)))
    }
}

extension Components.Schemas.VerifyRequest {
    /// The checkpoint's heads (none without one).
    var heads: [ChainHead] { (checkpoint?.heads ?? []).map { ChainHead(chain: $0.chain, seq: $0.seq, hash: $0.hash) } }
}

extension AuditLog.Report {
    /// The contract's report (the audit log's and the access log's).
    var api: Components.Schemas.VerifyReport {
        get throws {
            let failure = try failure.map {
                Components.Schemas.VerifyFailure(
                    chain: $0.chain, seq: $0.seq, eventId: $0.eventID, kind: try .init(known: $0.kind.rawValue),
                    detail: $0.detail)
            }
            return .init(intact: failure == nil, chains: chains, events: events, failure: failure)
        }
    }
}
