import BackofficeAPI
import BackofficePlatform
import Foundation

extension APIHandler {
    func getMailPreferences(_ input: Operations.GetMailPreferences.Input) async throws
        -> Operations.GetMailPreferences.Output
    {
        .ok(.init(body: .json(.init(items: try await read(ReadMailPreferences()).map(\.api)))))
    }

    func setMailPreferences(_ input: Operations.SetMailPreferences.Input) async throws
        -> Operations.SetMailPreferences.Output
    {
        let body: Components.Schemas.MailPreferenceChanges = try json(input.body)
        let choices =
            (body.subscribe ?? []).map { (topic: $0, subscribed: true) }
            + (body.unsubscribe ?? []).map { (topic: $0, subscribed: false) }
        let after = try await change(SetMailPreferences(choices: choices), body: body) { $0.map(\.api) }
        return .ok(.init(body: .json(.init(items: after))))
    }
}

extension MailPreference {
    var api: Components.Schemas.MailPreference {
        .init(topic: topic, subscribed: subscribed, description: description)
    }
}
