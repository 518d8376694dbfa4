import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// The bundle of the domains' templates (each domain's `Pages/`, flattened by Package.swift).
    static let templates = Bundle.module

    /// The console of `settings`' server: the shell with the domains' templates (this module's
    /// bundle) and every domain's pages registered on `router`.
    static func serving(
        _ settings: ServerSettings, database: Database, policies: PolicySet, invitationLinks: InvitationLinks,
        on router: Router<AppRequestContext>
    ) throws -> Console {
        var console = try Console(
            database: database, policies: policies, templates: [templates],
            secondFactorKey: settings.secondFactorKey, signInGate: settings.signInGate)
        console.mailChoices = offeredMail
        let streams = LiveStreams(settings.consoleLiveUpdates)
        console.register(on: router) { group in
            console.registerDomainPages(
                on: group, settings: settings, streams: streams, invitationLinks: invitationLinks)
        }
        return console
    }

    /// Every domain's console pages, in the navigation's order: the one list of them (a new
    /// domain with pages adds its line here, and its `Pages/` folder to Package.swift's list).
    private func registerDomainPages(
        on group: RouterGroup<AppRequestContext>, settings: ServerSettings, streams: LiveStreams,
        invitationLinks: InvitationLinks
    ) {
        let payments = settings.payments
        registerHome(on: group)
        registerAccounts(on: group)
        registerAccountsBulk(on: group)
        registerOrders(on: group, payments: payments)
        registerBilling(on: group, payments: payments)
        registerGoods(on: group)
        registerGoodsBulk(on: group)
        registerGoodsFiles(on: group)
        registerAudit(on: group)
        registerMessages(on: group)
        registerChallenges(on: group, streams: streams)
        registerPeople(on: group, invitationLinks: invitationLinks)
        registerFitPoints(on: group)
        registerApprovals(on: group, payments: payments)
        registerShops(on: group)
        registerAccess(on: group)
        registerContentPolicies(on: group)
        registerEarningRules(on: group)
        registerBadges(on: group)
        registerArticles(on: group)
        registerDesk(Food.self, on: group)
        registerFoodImports(on: group)
        registerDesk(WorkoutVideo.self, on: group)
        registerDesk(Recipe.self, on: group)
        registerPlans(on: group)
        registerRecommendations(on: group)
        registerHealthProfiles(on: group)
        registerModeration(on: group)
        registerWebhookEndpoints(
            on: group, outbound: settings.outbound,
            secrets: WebhookEndpointSecrets(secondFactorKey: settings.secondFactorKey))
        registerMailPreferences(on: group, links: settings.unsubscribeLinks)
    }
}
