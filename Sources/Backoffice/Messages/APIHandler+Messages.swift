import BackofficeAPI
import BackofficePlatform
import Crypto
import Foundation

extension SystemMessage {
    /// The contract's message, with its state at `now`.
    func api(at now: Date) throws -> Components.Schemas.Message {
        Components.Schemas.Message(
            id: id.text, title: title, body: body, severity: try .init(known: severity.rawValue),
            audience: try .init(known: audience.rawValue),
            state: try .init(known: state(at: now).rawValue), publishAt: publishAt, expiresAt: expiresAt,
            windowStartsAt: windowStartsAt,
            windowEndsAt: windowEndsAt, retractedAt: retractedAt, retractReason: retractReason, createdAt: createdAt,
            updatedAt: updatedAt,
            version: version)
    }

    var activeAPI: Components.Schemas.ActiveMessage {
        get throws {
            Components.Schemas.ActiveMessage(
                id: id.text, title: title, body: body, severity: try .init(known: severity.rawValue),
                audience: try .init(known: audience.rawValue),
                publishAt: publishAt, expiresAt: expiresAt, windowStartsAt: windowStartsAt, windowEndsAt: windowEndsAt)
        }
    }
}

extension APIHandler {
    func createMessage(_ input: Operations.CreateMessage.Input) async throws -> Operations.CreateMessage.Output {
        let body: Components.Schemas.MessageDraft = try json(input.body)
        let create = CreateMessage(
            title: body.title, body: body.body, severity: try .init(known: body.severity.rawValue),
            audience: try body.audience.map { try .init(known: $0.rawValue) } ?? .all, publishAt: body.publishAt,
            expiresAt: body.expiresAt,
            windowStartsAt: body.windowStartsAt, windowEndsAt: body.windowEndsAt)
        let message = try await change(
            create, body: body, status: 201
        ) { [now = self.now] in try $0.api(at: now) }  // the state once the change is made
        return .created(.init(headers: .init(eTag: EntityTag.of(message.version)), body: .json(message)))
    }

    func listMessages(_ input: Operations.ListMessages.Input) async throws -> Operations.ListMessages.Output {
        let (items, next) = try await newestFirst(limit: input.query.limit, cursor: input.query.cursor) {
            ListMessages(after: $0, limit: $1)
        } answer: {
            try $0.api(at: now)
        }
        return .ok(.init(body: .json(.init(items: items, nextCursor: next))))
    }

    func getMessage(_ input: Operations.GetMessage.Input) async throws -> Operations.GetMessage.Output {
        let message = try await read(GetMessage(id: try parseID(input.path.messageId, "message_id")))
        return .ok(
            .init(
                headers: .init(eTag: EntityTag.of(message.version)),
                body: .json(try message.api(at: now))))
    }

    func publishMessage(_ input: Operations.PublishMessage.Input) async throws -> Operations.PublishMessage.Output {
        let id = try parseID(input.path.messageId, "message_id")
        let message = try await change(
            PublishMessage(messageID: id, ifMatch: input.headers.ifMatch), on: id, body: String?.none
        ) { [now = self.now] in try $0.api(at: now) }  // the state once the change is made
        return .ok(.init(headers: .init(eTag: EntityTag.of(message.version)), body: .json(message)))
    }

    func retractMessage(_ input: Operations.RetractMessage.Input) async throws -> Operations.RetractMessage.Output {
        let body: Components.Schemas.ReasonRequest = try json(input.body)
        let id = try parseID(input.path.messageId, "message_id")
        let message = try await change(
            RetractMessage(messageID: id, reason: body.reason, ifMatch: input.headers.ifMatch), on: id, body: body
        ) { [now = self.now] in try $0.api(at: now) }  // the state once the change is made
        return .ok(.init(headers: .init(eTag: EntityTag.of(message.version)), body: .json(message)))
    }

    /// The app's read. The ETag is a digest of the messages answered and their versions (a
    /// message's text changes only with its version), so it changes when a scheduled message
    /// starts showing or one expires, and an unchanged set is 304 without encoding a body.
    func activeMessages(_ input: Operations.ActiveMessages.Input) async throws -> Operations.ActiveMessages.Output {
        let audience: SystemMessage.Audience = try input.query.audience.map { try .init(known: $0.rawValue) } ?? .all
        let showing = try await read(ActiveMessages(audience: audience))
        let etag = EntityTag.digest("m", showing.map { "\($0.id.text):\($0.version)" })
        if EntityTag.matches(input.headers.ifNoneMatch, etag) { return .notModified(.init(headers: .init(eTag: etag))) }
        return .ok(.init(headers: .init(eTag: etag), body: .json(.init(items: try showing.map { try $0.activeAPI }))))
    }
}
