import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// API tokens (partner admins: their shop's; platform admins: everyone's): the list (never a
    /// secret), issue one for a person or service of the tenant (the secret shown this once), and
    /// revoke one, confirmed. Tenants (platform roles): the list and, for platform admins, a new
    /// partner tenant. The API's use cases, audited.
    func registerAccess(on group: RouterGroup<AppRequestContext>) {
        section("tokens", "API tokens", needs: CreateToken.action, on: group) { console in
            try await console.tokensPage(issues: [])
        }
        post("tokens/new", on: group) { console in try await console.createToken() }
        post("tokens/{id}/revoke", on: group) { console in
            return try await console.submit {
                try console.form.confirm("revoke")
                let token = try await console.run(RevokeToken(tokenID: try console.routeID()))
                return console.redirect("/console/tokens", flash: "Revoked \(token.name): it is refused from now on.")
            } refused: { issues in
                try await console.tokensPage(issues: issues)
            }
        }
        section("tenants", "Tenants", needs: ListTenants.action, on: group) { console in
            try await console.tenantsPage(issues: [])
        }
        post("tenants/new", on: group) { console in
            return try await console.submit(reading: FormRefusal.reading(conflictFields: ["slug_taken": "slug"])) {
                let tenant = try await console.run(
                    CreateTenant(slug: console.form["slug"] ?? "", name: console.form["name"] ?? ""))
                return console.redirect(
                    "/console/tenants", flash: "Created \(tenant.name) (\(tenant.slug)): invite its admin from People.")
            } refused: { issues in
                try await console.tenantsPage(issues: issues, values: console.form.values)
            }
        }
    }
}

extension ConsoleRequest {
    /// Makes a token from the form: its secret is shown once, on the page this answers.
    fileprivate func createToken() async throws -> ConsoleAnswer {
        return try await submit {
            guard let owner = form.text("operator_id").flatMap(UUID.init(uuidString:)) else {
                throw DomainError.invalid([
                    FieldIssue(field: "operator_id", code: "required", message: "choose whose token it is")
                ])
            }
            let hours = try form.text("expires_in_hours").map { text -> Int in
                guard let hours = Int(text) else {
                    throw DomainError.invalid([
                        FieldIssue(
                            field: "expires_in_hours", code: "invalid_number",
                            message: "must be a whole number of hours")
                    ])
                }
                return hours
            }
            let (token, secret) = try await run(
                CreateToken(
                    operatorID: owner, name: form.text("name"), expiresInHours: hours, scopes: tickedScopes,
                    allowedAddresses: form.text("allowed_addresses").map {
                        $0.split(whereSeparator: { $0 == "," || $0.isWhitespace }).map(String.init)
                    }))
            return page(
                "token-created", title: "Token \(token.name)",
                [
                    "name": token.name, "secret": secret.value, "expires": ConsoleTime.text(token.expiresAt),
                    "role": token.role.rawValue,
                ])
        } refused: { issues in
            try await tokensPage(issues: issues, values: form.values)
        }
    }

    /// The scopes the form ticked (`scope_<name>` = yes); nil when none: every scope of the role.
    private var tickedScopes: [String]? {
        let ticked = form.values.keys.sorted().filter { $0.hasPrefix("scope_") && form.text($0) == "yes" }
        return ticked.isEmpty ? nil : ticked.map { String($0.dropFirst("scope_".count)) }
    }

    /// The scopes the issuer may offer its operators' tokens (the union of their roles'), ticked as sent.
    private func scopeChoices(_ owners: [Operator], values: [String: String]) -> [[String: Any]] {
        let access = context.policies.access
        return Set(owners.flatMap { access.scopes(of: $0.role) }).sorted().map { scope in
            ["name": scope, "field": "scope_" + scope, "ticked": values["scope_" + scope] == "yes"]
        }
    }

    fileprivate func tokensPage(issues: [FieldIssue], values: [String: String] = [:]) async throws -> ConsoleAnswer {
        let start = ConsoleLinks.firstID
        let after = form.text("after").flatMap(UUID.init(uuidString:)) ?? start
        let found = try await read(ListTokens(owner: nil, afterID: after, limit: Console.pageSize + 1))
        let tokens = found.prefix(Console.pageSize)
        let platform = principal.knownRole?.isPlatform ?? false
        let owners = try await read(
            ListOperators(owner: platform ? nil : principal.tenantID, afterID: start, limit: 500)
        ).filter {
            $0.status == "active"
        }
        let emails = Dictionary(owners.map { ($0.id, $0.email) }, uniquingKeysWith: { first, _ in first })
        let now = now
        var data: [String: Any] = [
            "tokens": tokens.map { token -> [String: Any] in
                var row: [String: Any] = [
                    "id": token.id.text, "name": token.name,
                    "role": token.role.rawValue.replacingOccurrences(of: "_", with: " "),
                    "owner": emails[token.operatorID] ?? token.operatorID.text,
                    "expires": ConsoleTime.text(token.expiresAt),
                    "state": token.revokedAt != nil ? "revoked" : token.expiresAt <= now ? "expired" : "active",
                ]
                if let used = token.lastUsedAt { row["used"] = ConsoleTime.text(used) }
                row["scopes"] = token.scopes?.joined(separator: ", ") ?? "all of the role's"
                row["from"] = token.allowedAddresses?.joined(separator: ", ") ?? "anywhere"
                if row["state"] as? String == "active" { row["live"] = true }
                return row
            },
            "hasTokens": !tokens.isEmpty, "values": values, "canRevoke": may(RevokeToken.action),
            "owners": owners.map {
                ConsoleOption.choice(
                    value: $0.id.text, label: "\($0.email) (\($0.role.rawValue))",
                    selected: $0.id.text == values["operator_id"])
            },
            "defaultHours": context.policies.security.defaultTokenLifetimeHours,
            "scopes": scopeChoices(owners, values: values),
        ]
        if found.count > Console.pageSize, let last = tokens.last {
            data["next"] = ConsoleLinks.path("/console/tokens", ["after": last.id.text])
        }
        FormRefusal(issues).add(to: &data)
        return page("tokens", title: "API tokens", status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }

    fileprivate func tenantsPage(issues: [FieldIssue], values: [String: String] = [:]) async throws -> ConsoleAnswer {
        let found = try await read(ListTenants(afterSlug: form.text("after") ?? "", limit: Console.pageSize + 1))
        let tenants = found.prefix(Console.pageSize)
        var data: [String: Any] = [
            "tenants": tenants.map {
                ["id": $0.id.text, "slug": $0.slug, "name": $0.name, "created": ConsoleTime.text($0.createdAt)]
            },
            "hasTenants": !tenants.isEmpty, "values": values, "canCreate": may(CreateTenant.action),
        ]
        if found.count > Console.pageSize, let last = tenants.last {
            data["next"] = ConsoleLinks.path("/console/tenants", ["after": last.slug])
        }
        FormRefusal(issues).add(to: &data)
        return page("tenants", title: "Tenants", status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }
}
