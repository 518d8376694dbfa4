import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Policies (pure)")
struct PolicyTests {
    static func texts(access: String? = nil, security: String? = nil, retention: String? = nil) throws -> [String:
        String]
    {
        var texts = try PolicySet.texts(in: projectRoot.appendingPathComponent("policies"))
        if let access { texts["access.yaml"] = access }
        if let security { texts["security.yaml"] = security }
        if let retention { texts["retention.yaml"] = retention }
        return texts
    }

    @Test("the shipped policies validate")
    func shipped() throws {
        let set = try PolicySet.parse(try Self.texts())
        #expect(set.security.consecutiveFailedLogins == 3)
        #expect(set.retention.deletedAccountsPurgeAfterDays == 30)
        #expect(set.retention.loginAttemptsKeepDays == 90)
        #expect(set.security.failedAuthenticationLimit == 20)
        #expect(set.access.allows("backend_manager", "accounts.lock"))
        #expect(!set.access.allows("partner_admin", "accounts.lock"))
        #expect(!set.access.allows("system", "accounts.lock"), "unknown roles may do nothing")
        #expect(set.digest.count == 64)
    }

    @Test("an unknown action names the file and the entry")
    func unknownAction() throws {
        let access = "roles:\n  auditor:\n    scope: platform\n    allow: [audit.read, accounts.lok]\n"
        #expect {
            try PolicySet.parse(try Self.texts(access: access))
        } throws: { error in
            let error = error as? PolicyError
            return error?.file.hasSuffix("access.yaml") == true && error?.entry == "roles.auditor.allow[1]"
                && error?.problem.contains("accounts.lok") == true
        }
    }

    @Test("an unknown role names the entry")
    func unknownRole() throws {
        let access = "roles:\n  janitor:\n    scope: platform\n    allow: []\n"
        #expect {
            try PolicySet.parse(try Self.texts(access: access))
        } throws: { error in (error as? PolicyError)?.entry == "roles.janitor" }
    }

    @Test("a bad value names the file and the entry")
    func badValue() throws {
        let security =
            """
            lockout:\n  consecutive_failed_logins: zero\ntokens:\n  default_lifetime_hours: 1\n  \
            max_lifetime_hours: 2\n
            """
        #expect {
            try PolicySet.parse(try Self.texts(security: security))
        } throws: { error in
            let error = error as? PolicyError
            return error?.file.hasSuffix("security.yaml") == true && error?.entry == "lockout.consecutive_failed_logins"
        }
        let retention = "deleted_accounts:\n  purge_after_days: -1\nidempotency_keys:\n  keep_hours: 24\n"
        #expect(throws: PolicyError.self) { try PolicySet.parse(try Self.texts(retention: retention)) }
    }

    @Test("the digest changes with any policy file")
    func digest() throws {
        let base = try PolicySet.parse(try Self.texts())
        let shipped = try Self.texts()["retention.yaml"] ?? ""
        #expect(shipped.contains("purge_after_days: 30"))
        let changed = try PolicySet.parse(
            try Self.texts(
                retention: shipped.replacingOccurrences(of: "purge_after_days: 30", with: "purge_after_days: 31")))
        #expect(base.digest != changed.digest)
    }
}
