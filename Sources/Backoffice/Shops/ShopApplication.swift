import BackofficePlatform
import Foundation

/// A prospective shop's application, as the public form submits it and managers review it. The
/// payout account is kept only as the provider's reference and its last four digits.
package struct ShopApplication: Sendable, Equatable {
    package enum Status: String, Sendable, Codable { case pending, approved, rejected }

    package var id: UUID
    package var legalName: String
    package var contactEmail: String
    package var taxID: String
    package var address: ShopAddress
    package var payoutAccountHolder: String
    package var payoutAccountLast4: String
    package var payoutAccountReference: String?
    /// The eligibility checks, run when it was submitted.
    package var checks: [EligibilityCheck]
    /// Whether every check passed (only an eligible application can be approved).
    package var eligible: Bool
    package var status: Status
    package var submittedAt: Date
    package var decidedAt: Date?
    package var decisionReason: String?
    /// The tenant its approval made.
    package var tenantID: UUID?
    package var version: Int64
    /// The claim code, only in the answer to the application that made it (stored as SHA-256).
    package var claimCode: String? = nil

    /// This application with its personal data masked (for `pii: masked` roles): the contact
    /// email, the tax id, the account holder's name, the street lines and postal code.
    package var masked: ShopApplication {
        var copy = self
        copy.contactEmail = PIIMask.email(contactEmail)
        copy.taxID = PIIMask.text(taxID)
        copy.payoutAccountHolder = PIIMask.name(payoutAccountHolder)
        copy.address = PIIMask.address(address)
        return copy
    }

    /// What the applicant is told: each check by name and verdict, a failed one only as
    /// `not_eligible` with the application's id as the reference a manager looks it up by — never
    /// which shop or application matched, nor the provider's reason for refusing the account.
    package var forApplicant: ShopApplication {
        var copy = self
        copy.checks = checks.map { check in
            check.passed ? check : .failed(check.check, "not_eligible: quote reference \(id.text) to HealthTrack")
        }
        return copy
    }

    /// What the audit log keeps of it: its state and the checks' verdicts, never the applicant's
    /// contact email, tax id or bank reference (the log outlives the application and is read by
    /// auditors, for whom personal data is masked).
    var snapshot: String? {
        get throws {
            struct Snapshot: Encodable {
                let legal_name: String, status: String, eligible: Bool, checks: [EligibilityCheck]
                let tenant_id: String?
            }
            return try AuditRecord.json(
                Snapshot(
                    legal_name: legalName, status: status.rawValue, eligible: eligible, checks: checks,
                    tenant_id: tenantID?.text))
        }
    }
}

/// A postal address (US shops: `region` is the state).
package struct ShopAddress: Sendable, Equatable, Codable {
    package var line1: String
    package var line2: String?
    package var city: String
    package var region: String
    package var postalCode: String
    /// ISO 3166-1 alpha-2.
    package var country: String

    package init(line1: String, line2: String?, city: String, region: String, postalCode: String, country: String) {
        (self.line1, self.line2, self.city, self.region, self.postalCode, self.country) = (
            line1, line2, city, region, postalCode, country
        )
    }

    enum CodingKeys: String, CodingKey {
        case line1, line2, city, region, country
        case postalCode = "postal_code"
    }

    /// The trimmed address.
    var trimmed: ShopAddress {
        func trim(_ text: String) -> String { text.trimmingCharacters(in: .whitespacesAndNewlines) }
        let second = line2.map(trim)
        return ShopAddress(
            line1: trim(line1), line2: second?.isEmpty == true ? nil : second, city: trim(city), region: trim(region),
            postalCode: trim(postalCode), country: trim(country).uppercased())
    }
}

/// One eligibility check's result, stored with the application and shown to the reviewer.
package struct EligibilityCheck: Sendable, Equatable, Codable {
    /// `required_fields`, `tax_id_format`, `duplicate_shop` or `bank_account`.
    package var check: String
    package var passed: Bool
    package var detail: String

    package static func passed(_ check: String, _ detail: String) -> Self {
        Self(check: check, passed: true, detail: detail)
    }
    package static func failed(_ check: String, _ detail: String) -> Self {
        Self(check: check, passed: false, detail: detail)
    }
}

/// The shop's US tax id, an Employer Identification Number: nine digits written `NN-NNNNNNN`,
/// whose first two digits are a prefix the IRS assigns (IRS, "How EINs are assigned and valid
/// EIN prefixes").
package enum EmployerIdentificationNumber {
    /// The prefixes the IRS assigns.
    static let validPrefixes: Set<Int> = Set(
        [
            Array(1...6), Array(10...16), Array(20...27), Array(30...48), Array(50...68), Array(71...77),
            Array(80...88), Array(90...95), [98, 99],
        ]
        .joined())

    /// `text` written `NN-NNNNNNN` when it is an EIN (with or without the dash), else nil.
    package static func normalized(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let digits = trimmed.filter { $0 != "-" }
        guard digits.count == 9, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
            trimmed.count == 9
                || (trimmed.count == 10
                    && trimmed.firstIndex(of: "-") == trimmed.index(trimmed.startIndex, offsetBy: 2)),
            let prefix = Int(digits.prefix(2)), validPrefixes.contains(prefix)
        else { return nil }
        return "\(digits.prefix(2))-\(digits.dropFirst(2))"
    }
}

/// The eligibility checks that need no I/O: required fields and the tax id's format.
enum ShopEligibility {
    /// `duplicate_shop`: no approved shop and no waiting application (but `excluding`) with this
    /// tax id or legal name. Its detail says which matched: it is for the reviewer, never the
    /// applicant (`ShopApplication.forApplicant`).
    static func duplicate(taxID: String, legalName: String, excluding: UUID? = nil, in unit: UnitOfWork) async throws
        -> EligibilityCheck
    {
        let name = legalName.lowercased()
        let existing = try await unit.first(
            """
            SELECT 'an approved shop' FROM shop_profiles WHERE tax_id = \(taxID) OR lower(legal_name) = \(name)
            UNION ALL
            SELECT 'an application waiting for review' FROM shop_applications
            WHERE status = 'pending' AND (tax_id = \(taxID) OR lower(legal_name) = \(name)) AND id IS DISTINCT FROM
                \(excluding)
            LIMIT 1
            """
        ) { try $0.decode(String.self) }
        guard let existing else {
            return .passed("duplicate_shop", "no shop or waiting application has this tax id or legal name")
        }
        return .failed("duplicate_shop", "\(existing) has this tax id or legal name")
    }

    /// `required_fields`: every field a shop must give, named when blank.
    static func requiredFields(_ form: ShopApplicationForm) -> EligibilityCheck {
        let fields: [(String, String)] = [
            ("legal_name", form.legalName), ("tax_id", form.taxID), ("address.line1", form.address.line1),
            ("address.city", form.address.city),
            ("address.region", form.address.region), ("address.postal_code", form.address.postalCode),
            ("address.country", form.address.country),
            ("payout_bank_account.holder_name", form.bankAccount.holderName),
            ("payout_bank_account.routing_number", form.bankAccount.routingNumber),
            ("payout_bank_account.account_number", form.bankAccount.accountNumber),
        ]
        let missing = fields.filter { $0.1.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }.map(\.0)
        return missing.isEmpty
            ? .passed("required_fields", "every required field is present")
            : .failed("required_fields", "missing: \(missing.joined(separator: ", "))")
    }

    /// `tax_id_format`: an EIN with an assigned prefix.
    static func taxIDFormat(_ taxID: String) -> EligibilityCheck {
        EmployerIdentificationNumber.normalized(taxID) != nil
            ? .passed("tax_id_format", "a valid EIN")
            : .failed("tax_id_format", "not an EIN (NN-NNNNNNN with a prefix the IRS assigns)")
    }
}

/// What the public form submits.
package struct ShopApplicationForm: Sendable {
    package var legalName: String
    package var contactEmail: String
    package var taxID: String
    package var address: ShopAddress
    package var bankAccount: BankAccount

    package init(legalName: String, contactEmail: String, taxID: String, address: ShopAddress, bankAccount: BankAccount)
    {
        self.legalName = legalName.trimmingCharacters(in: .whitespacesAndNewlines)
        self.contactEmail = contactEmail.trimmingCharacters(in: .whitespaces)
        self.taxID = taxID.trimmingCharacters(in: .whitespaces)
        self.address = address.trimmed
        self.bankAccount = BankAccount(
            holderName: bankAccount.holderName.trimmingCharacters(in: .whitespacesAndNewlines),
            routingNumber: bankAccount.routingNumber.trimmingCharacters(in: .whitespaces),
            accountNumber: bankAccount.accountNumber.trimmingCharacters(in: .whitespaces))
    }

    /// Refuses what cannot even be reviewed (422): an unusable contact email, over-long fields.
    /// Blank fields are not refused here: the `required_fields` check records them.
    func validate() throws {
        var validation = Validation()
        validation.email(contactEmail, "contact_email")
        validation.text(legalName, "legal_name", max: 200, required: false)
        validation.text(taxID, "tax_id", max: 50, required: false)
        for (field, value) in [
            ("address.line1", address.line1), ("address.line2", address.line2 ?? ""), ("address.city", address.city),
            ("address.region", address.region), ("address.postal_code", address.postalCode),
            ("address.country", address.country),
            ("payout_bank_account.holder_name", bankAccount.holderName),
        ] {
            validation.text(value, field, max: 200, required: false)
        }
        validation.text(bankAccount.routingNumber, "payout_bank_account.routing_number", max: 9, required: false)
        validation.text(bankAccount.accountNumber, "payout_bank_account.account_number", max: 17, required: false)
        try validation.check()
    }
}

/// A shop's handle made from its legal name: lower-case letters and digits joined by dashes,
/// at most 63 characters ("Northwind Sports, LLC" → `northwind-sports-llc`).
package enum ShopSlug {
    package static func from(_ legalName: String) -> String {
        var slug = ""
        for scalar in legalName.lowercased().unicodeScalars {
            if ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) {
                slug.unicodeScalars.append(scalar)
            } else if !slug.isEmpty && !slug.hasSuffix("-") {
                slug += "-"
            }
        }
        slug = String(slug.prefix(63))
        while slug.hasSuffix("-") { slug.removeLast() }
        return slug.count >= 2 ? slug : "shop" + (slug.isEmpty ? "" : "-" + slug)
    }
}

extension ShopApplication: NewestFirst {
    package var listedAt: Date { submittedAt }
}
