import ArgumentParser
import BackofficePlatform

@main
struct BackofficeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backoffice",
        abstract: "HealthTrack back office: the service and the command line that drives it.",
        discussion: """
            Exit codes: 0 ok, 64 usage, 3 not found, 4 unauthenticated or forbidden, 5 conflict \
            (state, version, idempotency), \
            6 rejected input, 7 service unavailable, 8 audit verification failed.

            Example: backoffice accounts list --status locked

            Shell completion: source <(backoffice --generate-completion-script bash)   (also zsh, fish)
            """,
        version: "0.1.0",
        groupedSubcommands: [
            CommandGroup(name: "Run", subcommands: [Dev.self, Serve.self, DB.self, Admin.self, Policies.self]),
            CommandGroup(name: "Sign in", subcommands: [Login.self, Logout.self, WhoAmI.self, TOTPCode.self]),
            CommandGroup(
                name: "Operate",
                subcommands: [
                    Accounts.self, Tenants.self, Operators.self, Clients.self, Tokens.self, Approvals.self,
                    Messages.self,
                    ContentPolicies.self,
                    Articles.self, Foods.self, Videos.self, Recipes.self, Plans.self, Recommendations.self,
                    HealthProfiles.self,
                    Moderation.self,
                    FitPoints.self, Challenges.self,
                    Badges.self, Activity.self, Shops.self, Goods.self, Orders.self, Payments.self, Subscriptions.self,
                    Billing.self, Reports.self,
                    Audit.self,
                    WebhookEndpoints.self,
                    Mail.self,
                    Maintenance.self,
                ]),
        ])
}
