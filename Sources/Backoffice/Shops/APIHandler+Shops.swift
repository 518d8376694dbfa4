import BackofficeAPI
import BackofficePlatform
import Foundation

extension ShopApplication {
    var api: Components.Schemas.ShopApplication {
        get throws {
            Components.Schemas.ShopApplication(
                id: id.text, legalName: legalName, contactEmail: contactEmail, taxId: taxID,
                address: .init(
                    line1: address.line1, line2: address.line2, city: address.city, region: address.region,
                    postalCode: address.postalCode,
                    country: address.country),
                payoutAccount: .init(
                    holderName: payoutAccountHolder, last4: payoutAccountLast4,
                    verified: payoutAccountReference != nil),
                checks: try checks.map {
                    .init(check: try .init(known: $0.check), passed: $0.passed, detail: $0.detail)
                }, eligible: eligible,
                status: try .init(known: status.rawValue), submittedAt: submittedAt, decidedAt: decidedAt,
                decisionReason: decisionReason,
                tenantId: tenantID?.text, claimCode: claimCode, version: version)
        }
    }
}

extension APIHandler {
    func applyForShop(_ input: Operations.ApplyForShop.Input) async throws -> Operations.ApplyForShop.Output {
        let body: Components.Schemas.ShopApplicationForm = try json(input.body)
        let address = body.address
        let account = body.payoutBankAccount
        let form = ShopApplicationForm(
            legalName: body.legalName, contactEmail: body.contactEmail, taxID: body.taxId,
            address: ShopAddress(
                line1: address.line1, line2: address.line2, city: address.city, region: address.region,
                postalCode: address.postalCode,
                country: address.country),
            bankAccount: BankAccount(
                holderName: account.holderName, routingNumber: account.routingNumber,
                accountNumber: account.accountNumber))
        let application = try await database.runStaged(ApplyForShop(form, payments: payments), context: try context())
        return .created(.init(body: .json(try application.forApplicant.api)))
    }

    func listShopApplications(_ input: Operations.ListShopApplications.Input) async throws
        -> Operations.ListShopApplications.Output
    {
        let status = try input.query.status.map { try ShopApplication.Status(known: $0.rawValue) }
        let (items, next) = try await newestFirst(limit: input.query.limit, cursor: input.query.cursor) {
            ListShopApplications(status: status, after: $0, limit: $1)
        } answer: {
            try $0.api
        }
        return .ok(.init(body: .json(.init(items: items, nextCursor: next))))
    }

    func getShopApplication(_ input: Operations.GetShopApplication.Input) async throws
        -> Operations.GetShopApplication.Output
    {
        let application = try await read(
            GetShopApplication(id: try parseID(input.path.applicationId, "application_id")))
        return .ok(.init(headers: .init(eTag: EntityTag.of(application.version)), body: .json(try application.api)))
    }

    func approveShopApplication(_ input: Operations.ApproveShopApplication.Input) async throws
        -> Operations.ApproveShopApplication.Output
    {
        let body: Components.Schemas.ShopApprovalRequest = try json(input.body)
        let id = try parseID(input.path.applicationId, "application_id")
        let approval = try await change(
            ApproveShopApplication(applicationID: id, slug: body.slug, reason: body.reason), on: id, body: body
        ) { approval in
            Components.Schemas.ShopApproval(
                application: try approval.application.api, tenant: approval.tenant.api, admin: try approval.admin.api)
        }
        return .ok(.init(body: .json(approval)))
    }

    func claimShop(_ input: Operations.ClaimShop.Input) async throws -> Operations.ClaimShop.Output {
        let body: Components.Schemas.ShopClaim = try json(input.body)
        let (token, secret) = try await publicChange(
            ClaimShop(applicationID: try parseID(input.path.applicationId, "application_id"), code: body.claimCode))
        return .created(
            .init(
                headers: .init(cacheControl: "no-store"), body: .json(.init(token: try token.api, secret: secret.value))
            ))
    }

    func rejectShopApplication(_ input: Operations.RejectShopApplication.Input) async throws
        -> Operations.RejectShopApplication.Output
    {
        let body: Components.Schemas.ReasonRequest = try json(input.body)
        let id = try parseID(input.path.applicationId, "application_id")
        let application = try await change(
            RejectShopApplication(applicationID: id, reason: body.reason), on: id, body: body
        ) { try $0.api }
        return .ok(.init(headers: .init(eTag: EntityTag.of(application.version)), body: .json(application)))
    }
}
