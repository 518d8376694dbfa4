import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The outermost responder: gives every request an id (echoed as `X-Request-Id`), enforces the
/// body size limit, authenticates `/v1` requests by bearer token, and turns every error into
/// problem+json. Authorization happens per operation, against `policies/access.yaml`.
struct EdgeResponder<Inner: HTTPResponder>: HTTPResponder where Inner.Context == AppRequestContext {
    typealias Context = AppRequestContext
    let inner: Inner
    let authenticator: Authenticator
    let maxBodySize: Int

    func respond(to request: Request, context: Context) async throws -> Response {
        let requestID = RequestID.accept(request.headers[.xRequestID])
        var response: Response
        do {
            var request = request
            if let length = request.headers[.contentLength].flatMap(Int.init), length > maxBodySize { throw Problem.payloadTooLarge }
            _ = try await request.collectBody(upTo: maxBodySize)
            var principal: Principal?
            if request.uri.path.hasPrefix("/v1/") {
                guard let token = Self.bearer(request.headers[.authorization]), let found = try await authenticator.principal(for: token) else {
                    throw Problem.unauthenticated
                }
                principal = found
            }
            let scope = RequestScope(principal: principal, requestID: requestID, sourceIP: context.remoteAddress?.ipAddress)
            let inner = self.inner
            response = try await RequestScope.$current.withValue(scope) {
                try await inner.respond(to: request, context: context)
            }
            if response.status == .notFound && response.headers[.contentType] == nil {
                throw HTTPError(.notFound)  // the router's bare 404 for an unknown path
            }
        } catch {
            response = Self.problemResponse(Self.problem(for: error, logger: context.logger), requestID: requestID)
        }
        response.headers[.xRequestID] = requestID
        return response
    }

    static func bearer(_ header: String?) -> String? {
        guard let header, header.count > 7, header.prefix(7).lowercased() == "bearer " else { return nil }
        return String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
    }

    static func problem(for error: any Error, logger: Logger) -> Problem {
        switch error {
        case let problem as Problem: return problem
        case let error as HTTPError:
            switch error.status {
            case .contentTooLarge: return .payloadTooLarge
            case .notFound: return Problem(status: 404, code: "not_found", title: "Not found", detail: "No such endpoint.")
            case .methodNotAllowed: return Problem(status: 405, code: "method_not_allowed", title: "Method not allowed", detail: error.body)
            default:
                return Problem(status: error.status.code, code: "http_\(error.status.code)", title: error.status.reasonPhrase, detail: error.body)
            }
        default:
            logger.error("unhandled error", metadata: ["error": "\(String(reflecting: error))"])
            return .internalError
        }
    }

    static func problemResponse(_ problem: Problem, requestID: String) -> Response {
        Response(
            status: .init(code: problem.status),
            headers: [.contentType: "application/problem+json"],
            body: .init(byteBuffer: ByteBuffer(data: problem.body(requestID: requestID))))
    }
}

extension HTTPField.Name {
    static let xRequestID = Self("X-Request-Id")!
}
