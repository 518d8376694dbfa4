import BackofficeAPI
import Foundation
import PostgresNIO
import BackofficePlatform

/// The statement of reasons of one decision (the EU Digital Services Act, Art. 17): what was
/// decided and about which content, the facts, the ground with the guidelines' section, the
/// explanation, whether the detection and the decision were automated, and how to appeal.
package struct StatementOfReasons: Sendable, Equatable, Codable {
    package struct Ground: Sendable, Equatable, Codable {
        package var code: String
        package var label: String
        package var section: String
    }

    package var decisionID: UUID
    package var caseID: UUID
    package var contentKind: ContentKind
    package var contentID: String
    /// Nil once the author was purged.
    package var authorID: UUID?
    package var decision: DecisionKind
    package var removesContent: Bool
    package var accountLocked: Bool
    package var facts: String
    package var grounds: [Ground]
    package var explanation: String
    package var automatedDetection: Bool
    package var automatedDecision: Bool
    package var decidedAt: Date
    package var redress: String
    package var policyDigest: String
    /// The decision's place in the order of decisions (the export's cursor; not encoded).
    var seq: Int64 = 0

    enum CodingKeys: String, CodingKey {
        case decisionID = "decision_id", caseID = "case_id", contentKind = "content_kind", contentID = "content_id"
        case authorID = "author_id", decision, removesContent = "removes_content", accountLocked = "account_locked"
        case facts, grounds, explanation, automatedDetection = "automated_detection"
        case automatedDecision = "automated_decision", decidedAt = "decided_at", redress
        case policyDigest = "policy_digest"
    }
}

extension StatementOfReasons {
    /// The statement of `decision` on `moderationCase` under `policy` (a screen's ground names its
    /// rules; a moderator's, the policy's ground and section).
    init(_ decision: ModerationDecision, on moderationCase: ModerationCase, policy: ModerationPolicy) {
        let grounds: [Ground] =
            decision.automated
            ? decision.ground.split(separator: ",").map {
                Ground(code: String($0), label: "Term rule of the screen", section: "Community guidelines")
            }
            : [
                policy.ground(decision.ground).map { Ground(code: $0.code, label: $0.label, section: $0.section) }
                    ?? Ground(code: decision.ground, label: decision.ground, section: "")
            ]
        self.init(
            decisionID: decision.id, caseID: moderationCase.id, contentKind: moderationCase.contentKind,
            contentID: moderationCase.contentID, authorID: moderationCase.authorID, decision: decision.kind,
            removesContent: decision.removesContent, accountLocked: decision.lockID != nil, facts: decision.facts,
            grounds: grounds, explanation: decision.explanation, automatedDetection: moderationCase.origin == .screen,
            automatedDecision: decision.automated, decidedAt: decision.decidedAt, redress: policy.appeal,
            policyDigest: decision.policyDigest, seq: decision.seq)
    }
}

/// The statements of reasons of a case's decisions (`moderation.statement`), oldest first: the
/// app shows them to the author; moderators and auditors read them.
package struct ReadStatements: Query {
    package static let action: Action = "moderation.statement"
    let caseID: UUID

    package init(caseID: UUID) { self.caseID = caseID }

    package func read(in unit: UnitOfWork) async throws -> [StatementOfReasons] {
        let moderationCase = try await ModerationCase.fetch(caseID, in: unit)
        return try await ModerationDecision.all(ofCase: caseID, in: unit).map {
            StatementOfReasons($0, on: moderationCase, policy: unit.policies.moderation)
        }
    }
}
