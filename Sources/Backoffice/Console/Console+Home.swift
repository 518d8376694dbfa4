import Foundation
import Hummingbird

extension Console {
    /// The operator's home: where to go from here, and signing out of every session.
    func registerHome(on group: RouterGroup<AppRequestContext>) {
        group.get("home") { request, context in
            try await signedIn(request, context) { console in
                let links = console.navigation.items(for: console.principal.role, policies: console.context.policies, current: "").filter {
                    $0.href != "/console/home"
                }
                return console.page("home", title: "Home", ["links": links, "role": console.principal.role])
            }
        }
    }
}
