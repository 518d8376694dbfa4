import BackofficePlatform
import Foundation
import Logging
import PostgresNIO

/// A customer's appeal against a lock.
package struct Appeal: Sendable, Equatable {
    package var id: UUID
    package var customerID: UUID
    /// The lock contested (nil for a moderation case that locked nothing).
    package var lockID: UUID?
    /// The moderation case contested, if any.
    package var caseID: UUID?
    package var message: String
    package var status: AppealStatus
    package var createdAt: Date
    package var resolvedAt: Date?
    package var resolvedBy: UUID?
    package var resolutionReason: String?

    var snapshot: String {
        get throws {
            struct Snapshot: Encodable { let appeal_id: String, lock_id: String?, case_id: String?, status: String }
            return try AuditRecord.json(
                Snapshot(appeal_id: id.text, lock_id: lockID?.text, case_id: caseID?.text, status: status.rawValue))
        }
    }
}

extension Appeal {
    /// Whether `operatorID` made the moderation decision this appeal contests (the case's last
    /// decision that removed the content).
    func contests(decisionBy operatorID: UUID, in unit: UnitOfWork) async throws -> Bool {
        guard let caseID else { return false }
        return try await unit.first(
            """
            SELECT decided_by = \(operatorID) FROM moderation_decisions
            WHERE case_id = \(caseID) AND removes_content ORDER BY seq DESC LIMIT 1
            """
        ) { try $0.decode(Bool?.self) ?? false } ?? false
    }
}

/// The app files an appeal (`appeals.file`): against the account's open lock, or, naming a
/// moderation case, against the decision that removed the author's content (and its lock, if it
/// locked). One open appeal per lock and per case.
package struct FileAppeal: AuditedOperation {
    package static let action: Action = "appeals.file"
    let customerID: UUID
    let message: String
    let caseID: UUID?

    package init(customerID: UUID, message: String, caseID: UUID? = nil) {
        self.customerID = customerID
        self.message = message.trimmingCharacters(in: .whitespacesAndNewlines)
        self.caseID = caseID
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Appeal> {
        var validation = Validation()
        validation.text(message, "message", max: 4000)
        try validation.check()
        let customer = try await Customer.fetch(customerID, forUpdate: true, in: unit)
        let lockID: UUID?
        if let caseID {
            lockID = try await contestedCase(caseID, in: unit)
        } else {
            guard customer.status == .locked, let lock = customer.lock else {
                throw DomainError.invalidTransition(
                    "Only a locked account can appeal.", current: customer.status.rawValue)
            }
            lockID = lock.id
        }
        let appeal = try await unit.first(
            """
            INSERT INTO appeals (id, customer_id, lock_id, case_id, message, created_at)
            VALUES (\(unit.newID()), \(customerID), \(lockID), \(caseID), \(message), \(unit.now))
            ON CONFLICT DO NOTHING
            RETURNING \(unescaped: Appeal.columns)
            """, as: Appeal.self)
        guard let appeal else {
            throw DomainError.conflict(
                code: "appeal_already_open",
                detail: "This \(caseID == nil ? "lock" : "case") already has an open appeal.")
        }
        let event = AuditRecord(
            action: Self.action, tenantID: platformTenantID, targetType: "customer",
            targetID: customerID.uuidString.lowercased(),
            reason: message, before: nil, after: try appeal.snapshot)
        return Audited(appeal, event: event)
    }

    /// The lock of the upheld decision on `caseID` the customer authored (nil when it locked nothing).
    /// - Throws: 404 for another author's case; 409 for a case with no upheld decision to contest.
    private func contestedCase(_ caseID: UUID, in unit: UnitOfWork) async throws -> UUID? {
        let moderationCase = try await ModerationCase.fetch(caseID, in: unit)
        guard moderationCase.authorID == customerID else {
            throw DomainError.notFound("Moderation case \(caseID.text)")
        }
        guard
            let decision = try await unit.first(
                """
                SELECT \(unescaped: ModerationDecision.columns) FROM moderation_decisions
                WHERE case_id = \(caseID) AND removes_content ORDER BY seq DESC LIMIT 1
                """, as: ModerationDecision.self), moderationCase.overturnedAt == nil
        else {
            throw DomainError.invalidTransition(
                "Only a decision that removed the content can be appealed.",
                current: moderationCase.isOpen ? "open" : "decided")
        }
        return decision.lockID
    }
}

/// A manager resolves an open appeal (`appeals.resolve`): uphold keeps the lock, lift unlocks the
/// account (audited as `accounts.unlock` too). Resolving a resolved appeal is 409 `invalid_transition`.
/// Whoever made the moderation decision appealed (the decision that removed the content) does not
/// resolve its appeal: 403 `own_decision`, so a second person reads it (an appeal of a manager's
/// plain lock may go to the same manager, who may be the only one on duty).
package struct ResolveAppeal: AuditedOperation {
    package static let action: Action = "appeals.resolve"
    package enum Decision: String, Sendable { case uphold, lift }
    let appealID: UUID
    let decision: Decision
    let reason: String?

    package func perform(in unit: UnitOfWork) async throws -> Audited<Appeal> {
        let reason = try requireReason(reason)
        let before = try await unit.one(
            "SELECT \(unescaped: Appeal.columns) FROM appeals WHERE id = \(appealID) FOR UPDATE", as: Appeal.self,
            else: DomainError.notFound("Appeal \(appealID.text)"))
        guard before.status == .open else {
            throw DomainError.invalidTransition(
                "The appeal is already \(before.status.rawValue).", current: before.status.rawValue)
        }
        if let resolver = unit.principal.operatorID, try await before.contests(decisionBy: resolver, in: unit) {
            throw DomainError.forbiddenTarget(
                Self.action, code: "own_decision",
                detail: "An appeal is resolved by someone other than the person who made the decision it contests.")
        }
        let status: AppealStatus = decision == .lift ? .lifted : .upheld
        let after =
            try await unit.first(
                """
                UPDATE appeals SET status = \(status.rawValue), resolved_at = \(unit.now), resolved_by =
                    \(unit.principal.operatorID),
                    resolution_reason = \(reason)
                WHERE id = \(appealID) RETURNING \(unescaped: Appeal.columns)
                """, as: Appeal.self) ?? before
        let event = AuditRecord(
            action: Self.action, tenantID: platformTenantID, targetType: "customer",
            targetID: before.customerID.uuidString.lowercased(),
            reason: "\(decision.rawValue): \(reason)", before: try before.snapshot, after: try after.snapshot)
        guard decision == .lift else { return Audited(after, event: event) }
        if let caseID = before.caseID {  // the decision no longer counts against the author
            try await unit.execute(
                """
                UPDATE moderation_cases SET overturned_at = \(unit.now), version = version + 1
                WHERE id = \(caseID) AND overturned_at IS NULL
                """)
        }
        guard let lockID = before.lockID else { return Audited(after, event: event) }
        let account = try await Customer.fetch(before.customerID, forUpdate: true, in: unit)
        guard account.status == .locked, account.lock?.id == lockID else {
            // the lock was already lifted (or the account deleted): nothing more to undo
            return Audited(after, event: event)
        }
        let unlocked = try await account.write(
            status: .active, failedLogins: 0,
            lock: .lift(by: unit.principal.operatorID, reason: "appeal lifted: \(reason)"), in: unit)
        return Audited(
            after, event: event,
            more: [try accountEvent("accounts.unlock", account, unlocked, reason: "appeal lifted: \(reason)")])
    }
}
