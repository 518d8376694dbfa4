import BackofficePlatform
import Foundation
import NIOCore
import PostgresNIO

/// A prospective shop applies (`shop_applications.apply`, public: no token, rate-limited per
/// source address, per /64 for IPv6). The eligibility checks run at once and are stored with the
/// application: required fields, the tax id's format, no existing or waiting shop with the same
/// tax id or legal name, and the payout account verified by the payment provider. A failed check
/// does not refuse the application (the reviewer sees why it is not eligible); an unusable
/// contact email or over-long field is 422 and stores nothing; a provider that reaches no verdict
/// is 503 and stores nothing. The account number is never stored: only the provider's reference
/// and its last four digits.
///
/// A staged operation: the checks that read the database run first, the provider verifies the
/// account with no transaction open, and the application is recorded after.
package struct ApplyForShop: StagedOperation {
    package static let action: Action = "shop_applications.apply"
    let form: ShopApplicationForm
    let payments: any PaymentGateway

    package init(_ form: ShopApplicationForm, payments: any PaymentGateway) {
        self.form = form
        self.payments = payments
    }

    /// The checks made before the provider is asked.
    package struct Checked: Codable, Sendable {
        let taxID: String
        let checks: [EligibilityCheck]
    }

    package func ready() throws {}

    package func reserve(in unit: UnitOfWork) async throws -> Audited<Stage<Checked, ShopApplication>> {
        try form.validate()
        let taxID = EmployerIdentificationNumber.normalized(form.taxID) ?? form.taxID
        let checks = [
            ShopEligibility.requiredFields(form), ShopEligibility.taxIDFormat(form.taxID),
            try await ShopEligibility.duplicate(taxID: taxID, legalName: form.legalName, in: unit),
        ]
        return .unchanged(.call(Checked(taxID: taxID, checks: checks)))
    }

    package func call(_ checked: Checked) async throws -> BankAccountCheck { try await bankAccountCheck() }

    package func record(_ bank: BankAccountCheck, for checked: Checked, in unit: UnitOfWork) async throws -> Audited<
        ShopApplication
    > {
        let checks = checked.checks + [bank.check]
        let eligible = checks.allSatisfy(\.passed)
        let id = unit.newID()
        let claim = ShopClaimCode.generate()
        guard
            var application = try await unit.first(
                """
                INSERT INTO shop_applications (id, legal_name, contact_email, tax_id, address, payout_account_holder,
                    payout_account_last4,
                    payout_account_ref, checks, eligible, source_ip, submitted_at, claim_hash, claim_expires_at)
                VALUES (\(id), \(form.legalName), \(form.contactEmail), \(checked.taxID),
                    \(try AuditRecord.json(form.address))::jsonb,
                    \(form.bankAccount.holderName), \(form.bankAccount.last4), \(bank.reference),
                        \(try AuditRecord.json(checks))::jsonb, \(eligible),
                    \(unit.context.sourceIP), \(unit.now), \(ByteBuffer(bytes: ShopClaimCode.hash(claim))),
                    \(unit.now.addingTimeInterval(ShopClaimCode.lifetime)))
                RETURNING \(unescaped: ShopApplication.columns)
                """, as: ShopApplication.self)
        else { throw DomainError.inconsistent("the new application was not returned") }
        application.claimCode = claim
        return Audited(
            application,
            event: AuditRecord(
                action: Self.action, tenantID: platformTenantID, targetType: "shop_application", targetID: id.text,
                reason: nil, before: nil,
                after: try application.snapshot))
    }

    /// The provider's verdict on the payout account, as a check (well-formed numbers only).
    package struct BankAccountCheck: Sendable {
        let check: EligibilityCheck
        let reference: String?
    }

    private func bankAccountCheck() async throws -> BankAccountCheck {
        let account = form.bankAccount
        guard account.hasValidRoutingNumber else {
            return BankAccountCheck(
                check: .failed("bank_account", "the routing number is not an ABA routing number"), reference: nil)
        }
        guard account.hasValidAccountNumber else {
            return BankAccountCheck(
                check: .failed("bank_account", "the account number must be 4–17 digits"), reference: nil)
        }
        let verification: BankAccountVerification
        do {
            verification = try await payments.verifyBankAccount(account)
        } catch let error as PaymentProviderError {
            throw PaymentRefusal.providerUnavailable(error.description)
        }
        guard let reference = verification.reference else {
            return BankAccountCheck(
                check: .failed(
                    "bank_account",
                    "the payment provider could not verify it: \(verification.failureCode ?? "unverified")"),
                reference: nil)
        }
        return BankAccountCheck(
            check: .passed("bank_account", "verified by the payment provider (account ending \(account.last4))"),
            reference: reference)
    }
}

/// What approving a shop made: the tenant and its first partner admin. No credential: the
/// applicant claims the admin's token with its claim code (`ClaimShop`).
package struct ShopApproval: Sendable {
    package let application: ShopApplication
    package let tenant: Tenant
    package let admin: Operator
}

/// A manager approves an eligible, waiting application (`shop_applications.approve`): in one
/// transaction the tenant (slug from the legal name unless given), its shop profile and its first
/// `partner_admin` (the contact email) are made, each audited; the applicant claims the admin's
/// token (`ClaimShop`). Not waiting is 409 with the current state; not eligible is 409
/// `not_eligible`; a taken slug is 409 `slug_taken` (approve again with another `slug`).
package struct ApproveShopApplication: AuditedOperation {
    package static let action: Action = "shop_applications.approve"
    let applicationID: UUID
    let slug: String?
    let reason: String?

    package init(applicationID: UUID, slug: String?, reason: String?) {
        self.applicationID = applicationID
        self.slug = slug?.trimmingCharacters(in: .whitespaces)
        self.reason = reason?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<ShopApproval> {
        var validation = Validation()
        validation.text(reason, "reason", max: 1000, required: false)
        try validation.check()
        let before = try await ShopApplication.fetch(applicationID, forUpdate: true, in: unit)
        guard before.status == .pending else {
            throw DomainError.invalidTransition(
                "Only a waiting application can be approved.", current: before.status.rawValue)
        }
        guard before.eligible, let reference = before.payoutAccountReference else {
            let failed = before.checks.filter { !$0.passed }.map(\.check).joined(separator: ", ")
            throw DomainError.conflict(
                code: "not_eligible",
                detail: "The application failed its eligibility checks (\(failed)); reject it instead.")
        }
        // Checked again now: a shop approved, or an application sent, since it was submitted.
        let now = try await ShopEligibility.duplicate(
            taxID: before.taxID, legalName: before.legalName, excluding: before.id, in: unit)
        guard now.passed else {
            throw DomainError.conflict(
                code: "not_eligible", detail: "Since it was submitted, \(now.detail); reject it instead.")
        }
        let tenant = try await CreateTenant(slug: slug ?? ShopSlug.from(before.legalName), name: before.legalName)
            .perform(in: unit)
        let inserted = try await unit.first(
            """
            INSERT INTO shop_profiles (tenant_id, legal_name, contact_email, tax_id, address, payout_account_ref,
                payout_account_last4, application_id,
                created_at)
            VALUES (\(tenant.output.id), \(before.legalName), \(before.contactEmail), \(before.taxID),
                \(try AuditRecord.json(before.address))::jsonb,
                \(reference), \(before.payoutAccountLast4), \(before.id), \(unit.now))
            ON CONFLICT DO NOTHING RETURNING 1
            """
        ) { _ in true }
        guard inserted == true else {
            throw DomainError.conflict(code: "duplicate_shop", detail: "A shop with this tax id already exists.")
        }
        let admin = try await CreateOperator(
            email: before.contactEmail, role: .partnerAdmin, tenantID: tenant.output.id
        ).perform(in: unit)
        let after = try await unit.one(
            """
            UPDATE shop_applications SET status = 'approved', decided_at = \(unit.now), decided_by =
                \(unit.principal.operatorID),
                decision_reason = \(reason.flatMap { $0.isEmpty ? nil : $0 }), tenant_id = \(tenant.output.id),
                    version = version + 1
            WHERE id = \(applicationID) RETURNING \(unescaped: ShopApplication.columns)
            """, as: ShopApplication.self, else: DomainError.inconsistent("the approved application was not returned"))
        let event = AuditRecord(
            action: Self.action, tenantID: platformTenantID, targetType: "shop_application",
            targetID: applicationID.text, reason: reason,
            before: try before.snapshot, after: try after.snapshot)
        let approval = ShopApproval(application: after, tenant: tenant.output, admin: admin.output)
        let mail = try await Outbox.queue(Self.decisionMail(after, tenant: tenant.output.id), in: unit)
        return Audited(approval, event: event, more: tenant.events + admin.events + [mail])
    }

    /// The decision's mail to the application's contact email (the claim code is not in it: the
    /// applicant holds it from its application's answer).
    static func decisionMail(_ application: ShopApplication, tenant: UUID) -> QueuedMail {
        var fields = [
            "decision": application.status.rawValue, "legal_name": application.legalName,
            "application_id": application.id.text,
        ]
        if application.status == .rejected, let reason = application.decisionReason { fields["reason"] = reason }
        return QueuedMail(kind: .shopDecision, tenantID: tenant, recipient: application.contactEmail, fields: fields)
    }
}

/// A manager rejects a waiting application (`shop_applications.reject`, reason required). Not
/// waiting is 409 with the current state.
package struct RejectShopApplication: AuditedOperation {
    package static let action: Action = "shop_applications.reject"
    let applicationID: UUID
    let reason: String?

    package func perform(in unit: UnitOfWork) async throws -> Audited<ShopApplication> {
        let reason = try requireReason(reason)
        let before = try await ShopApplication.fetch(applicationID, forUpdate: true, in: unit)
        guard before.status == .pending else {
            throw DomainError.invalidTransition(
                "Only a waiting application can be rejected.", current: before.status.rawValue)
        }
        let after = try await unit.one(
            """
            UPDATE shop_applications SET status = 'rejected', decided_at = \(unit.now), decided_by =
                \(unit.principal.operatorID),
                decision_reason = \(reason), version = version + 1
            WHERE id = \(applicationID) RETURNING \(unescaped: ShopApplication.columns)
            """, as: ShopApplication.self, else: DomainError.inconsistent("the rejected application was not returned"))
        let mail = try await Outbox.queue(
            ApproveShopApplication.decisionMail(after, tenant: platformTenantID), in: unit)
        return Audited(
            after,
            event: AuditRecord(
                action: Self.action, tenantID: platformTenantID, targetType: "shop_application",
                targetID: applicationID.text, reason: reason,
                before: try before.snapshot, after: try after.snapshot),
            more: [mail])
    }
}

/// The applications in one state, in the order they arrived (`shop_applications.list`): the
/// waiting list is `pending`.
package struct ListShopApplications: Query {
    package static let action: Action = "shop_applications.list"
    let status: ShopApplication.Status?
    let after: (Date, UUID)?
    let limit: Int

    package init(status: ShopApplication.Status?, after: (Date, UUID)?, limit: Int) {
        self.status = status
        self.after = after
        self.limit = limit
    }

    package func read(in unit: UnitOfWork) async throws -> [ShopApplication] {
        let start = after ?? (Date.distantPast, platformTenantID)
        let applications: [ShopApplication] = try await unit.all(
            """
            SELECT \(unescaped: ShopApplication.columns) FROM shop_applications
            WHERE (\(status?.rawValue)::text IS NULL OR status = \(status?.rawValue)) AND (submitted_at, id) >
                (\(start.0), \(start.1))
            ORDER BY submitted_at, id LIMIT \(limit)
            """)
        return unit.context.masksPII ? applications.map(\.masked) : applications
    }
}

/// One application with its checks (`shop_applications.read`).
package struct GetShopApplication: Query {
    package static let action: Action = "shop_applications.read"
    let id: UUID
    package init(id: UUID) { self.id = id }
    package func read(in unit: UnitOfWork) async throws -> ShopApplication {
        let application = try await ShopApplication.fetch(id, in: unit)
        return unit.context.masksPII ? application.masked : application
    }
}

extension QueuedMail.Kind {
    /// A shop application's decision, to its contact email.
    static let shopDecision: Self = "shop_decision"
}
