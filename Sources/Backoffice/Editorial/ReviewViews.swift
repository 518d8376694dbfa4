import BackofficeConsole
import BackofficePlatform
import Foundation

/// Two versions side by side as a line diff of their whole content: by default the live version
/// (or, with none live, the one before the newest) and the newest. Each version comes as its
/// number and its content as lines of text, newest first.
struct VersionComparison {
    let from: (version: Int, text: String)
    let to: (version: Int, text: String)
    let all: [(version: Int, text: String)]

    init(_ versions: [(version: Int, text: String)], live: Int?, from: String?, to: String?) {
        func version(_ number: Int?) -> (version: Int, text: String)? {
            number.flatMap { v in versions.first { $0.version == v } }
        }
        let newest = versions[0]
        self.to = version(to.flatMap(Int.init)) ?? newest
        self.from =
            version(from.flatMap(Int.init)) ?? version(live).flatMap { $0.version == newest.version ? nil : $0 }
            ?? versions.dropFirst().first ?? newest
        all = versions
    }

    var values: [String: Any] {
        func options(_ chosen: Int) -> [ConsoleOption] {
            all.map {
                ConsoleOption.choice(
                    value: String($0.version), label: "Version \($0.version)", selected: $0.version == chosen)
            }
        }
        return [
            "fromOptions": options(from.version), "toOptions": options(to.version), "from": from.version,
            "to": to.version, "diff": TextDiff(from: from.text, to: to.text).values, "hasVersions": all.count > 1,
        ]
    }
}

/// The moves a record's page offers: those its state allows and the role may make, approval
/// not to whoever wrote a version since the live one (the use case refuses it either way).
struct ReviewMoves {
    let values: [String: Any]

    init<Record: Reviewed>(_ record: Record, wroteSinceLive: Bool, may: (Action) -> Bool) {
        let draft = record.state == .draft
        let review = record.state == .inReview
        values = [
            "canEdit": (draft || record.state == .published) && may(Record.updateAction),
            "canSubmit": draft && may(Record.action(.submit)),
            "canApprove": review && may(Record.action(.approve)) && !wroteSinceLive,
            "ownVersion": review && may(Record.action(.approve)) && wroteSinceLive,
            "canSendBack": review && may(Record.action(.sendBack)),
            "canArchive": record.state != .archived && may(Record.action(.archive)),
            "editsNewVersion": record.liveVersion != nil,
        ]
    }

    /// A move's refusal as the page shows it: the comment's issue next to that move's comment box
    /// (`comment_send_back`, `comment_archive`: the page has one per move).
    static func commentIssues(_ issues: [FieldIssue], of move: ReviewMove) -> [FieldIssue] {
        issues.map {
            $0.field == "comment"
                ? FieldIssue(field: "comment_\(move.rawValue)", code: $0.code, message: $0.message) : $0
        }
    }
}

extension ReviewMove {
    /// What the page says once the move is made.
    var done: String {
        switch self {
        case .submit: "Submitted for review: a manager reads it next."
        case .approve: "Approved: this version is live in the app."
        case .sendBack: "Sent back to its writer with your comment."
        case .archive: "Archived: the app no longer shows it."
        }
    }
}
