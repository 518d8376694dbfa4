import BackofficePlatform
import Foundation
import HTTPTypes
import Hummingbird

/// How a page file registers its routes: every route is a page or an action for a signed-in
/// operator (`signedIn`: the session, the CSRF check of a POST, the transaction and the error
/// pages), and a section's first page carries its link in the navigation.
extension Console {
    /// What a route does with a signed-in request.
    package typealias Handler = @Sendable (ConsoleRequest) async throws -> ConsoleAnswer

    /// The rows of one page of a console list.
    package static let pageSize = 50

    /// The path's `{id}`; anything but a UUID is a page that does not exist.
    package static func id(_ parameters: Parameters) throws -> UUID {
        guard let text = parameters.get("id"), let id = UUID(uuidString: text) else {
            throw DomainError.notFound("Page")
        }
        return id
    }

    /// A section of the console: its link in the navigation, shown to the roles the policy grants
    /// `action`, and its first page, `GET /console/<path>`.
    package func section(
        _ path: String, _ title: String, needs action: Action, on group: RouterGroup<AppRequestContext>,
        _ page: @escaping Handler
    ) {
        navigation.add("/console/\(path)", title, needs: action)
        get(path, on: group, page)
    }

    /// `GET /console/<path>`: a page, for a session at `stage`, in a read session unless
    /// `holdsTransaction` is false (a download read page by page).
    package func get(
        _ path: String, on group: RouterGroup<AppRequestContext>, holdsTransaction: Bool = true,
        stage: ConsoleStage = .signedIn,
        _ page: @escaping Handler
    ) {
        route(.get, path, on: group, holdsTransaction: holdsTransaction, stage: stage, page)
    }

    /// `POST /console/<path>`: an action, for a session at `stage`, in one transaction unless
    /// `holdsTransaction` is false (an action that calls another system).
    package func post(
        _ path: String, on group: RouterGroup<AppRequestContext>, holdsTransaction: Bool = true,
        stage: ConsoleStage = .signedIn,
        _ action: @escaping Handler
    ) {
        route(.post, path, on: group, holdsTransaction: holdsTransaction, stage: stage, action)
    }

    private func route(
        _ method: HTTPRequest.Method, _ path: String, on group: RouterGroup<AppRequestContext>, holdsTransaction: Bool,
        stage: ConsoleStage,
        _ handler: @escaping Handler
    ) {
        group.on(RouterPath(path), method: method) { request, context in
            try await signedIn(request, context, holdsTransaction: holdsTransaction, stage: stage, handler)
        }
    }
}
