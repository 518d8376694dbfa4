import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// The desk section of a reviewed kind (`/console/foods`, `/console/videos`,
    /// `/console/recipes`): an expert's own drafts (with the reviewer's comment), what waits in
    /// review and what is live; a manager's review queue (oldest submission first) and every
    /// record by state; a record's page (its facts, the diff between two versions, the moves the
    /// role may make); the editor, whose saving is a new version (`If-Match` from the form).
    func registerDesk<Kind: DeskKind>(_ kind: Kind.Type, on group: RouterGroup<AppRequestContext>) {
        let path = Kind.deskPath
        section(path, Kind.sectionTitle, needs: Kind.listAction, on: group) { console in
            try await console.deskList(Kind.self)
        }
        get("\(path)/new", on: group) { console in
            guard console.may(Kind.createAction) else { throw DomainError.forbidden(Kind.createAction) }
            return try await console.deskEditor(Kind.self, values: [:], record: nil)
        }
        post("\(path)/new", on: group) { console in
            try await console.submit(reading: { try Kind.issues($0, form: console.form) }) {
                let written = try await Kind.written(from: console.form, in: console)
                let record = try await console.run(Kind.creation(written, from: console.form))
                return console.redirect(
                    "/console/\(path)/\(record.id.text)", flash: "Saved as a draft: submit it for review when ready.")
            } refused: { issues in
                try await console.deskEditor(Kind.self, values: console.form.values, record: nil, issues: issues)
            }
        }
        get("\(path)/{id}", on: group) { console in try await console.deskPage(Kind.self, try console.routeID()) }
        get("\(path)/{id}/edit", on: group) { console in
            let record = try await console.read(GetReviewed<Kind>(id: try console.routeID()))
            return try await console.deskEditor(Kind.self, values: Kind.values(of: record), record: record)
        }
        post("\(path)/{id}/edit", on: group) { console in
            let record = try await console.read(GetReviewed<Kind>(id: try console.routeID()))
            return try await console.submit(reading: { try Kind.issues($0, form: console.form) }) {
                let written = try await Kind.written(from: console.form, in: console)
                _ = try await console.run(
                    UpdateReviewed<Kind, WholeContent<Kind.Written>>(
                        id: record.id, changes: WholeContent(content: written), ifMatch: console.form["version"]))
                return console.redirect("/console/\(path)/\(record.id.text)", flash: "Saved as a new version.")
            } refused: { issues in
                try await console.deskEditor(Kind.self, values: console.form.values, record: record, issues: issues)
            }
        }
        for move in ReviewMove.allCases {
            post("\(path)/{id}/\(move.path)", on: group) { console in try await console.deskMove(Kind.self, move) }
        }
    }
}

extension ConsoleRequest {
    /// An expert's desk (its drafts, what waits in review, what is live: 50 of each, newest change
    /// first), or a manager's and an auditor's list (the review queue, then every record in the
    /// chosen state, paged).
    fileprivate func deskList<Kind: DeskKind>(_ kind: Kind.Type) async throws -> ConsoleAnswer {
        func rows(_ state: ReviewState) async throws -> [DeskRow] {
            try await read(ListReviewed<Kind>(state: state, after: nil, limit: Console.pageSize)).map(DeskRow.init)
        }
        var data: [String: Any] = [
            "path": Kind.deskPath, "canCreate": may(Kind.createAction), "noun": Kind.noun,
            "canImport": Kind.importAction.map(may) ?? false,
        ]
        if context.authoredOnly {
            let (drafts, review, live) = (try await rows(.draft), try await rows(.inReview), try await rows(.published))
            data.merge([
                "isDesk": true, "drafts": drafts, "hasDrafts": !drafts.isEmpty, "inReview": review,
                "hasInReview": !review.isEmpty, "live": live, "hasLive": !live.isEmpty,
            ]) { $1 }
            return page("desk", title: Kind.deskTitle, data)
        }
        let state = try form.text("state").map { try ReviewState(known: $0) }
        let (items, next) = try await ListReviewed<Kind>.page(state: state, after: form.text("cursor"), limit: 50) {
            try await read($0)
        }
        (data["records"], data["hasRecords"]) = (items.map(DeskRow.init), !items.isEmpty)
        data["states"] = ConsoleOption.all(ReviewState.allCases.map(\.rawValue), selected: state?.rawValue, any: "Any")
            .map { ConsoleOption.choice(value: $0.value, label: $0.label.spaced, selected: $0.selected) }
        if state == nil, form.text("cursor") == nil, may(Kind.action(.approve)) {
            let queue = try await rows(.inReview)
            (data["queue"], data["hasQueue"], data["showsQueue"]) = (queue, !queue.isEmpty, true)
        }
        if let next {
            data["next"] = ConsoleLinks.path(
                "/console/\(Kind.deskPath)", ["state": state?.rawValue ?? "", "cursor": next])
        }
        return page("desk", title: Kind.sectionTitle, data)
    }

    /// The editor of a new record, or of a new version of `record`, with `values` and each
    /// refusal next to its field (422).
    fileprivate func deskEditor<Kind: DeskKind>(
        _ kind: Kind.Type, values: [String: String], record: Kind?, issues: [FieldIssue] = []
    ) async throws -> ConsoleAnswer {
        let refusal = FormRefusal(issues)
        var data: [String: Any] = [
            "path": Kind.deskPath, "section": Kind.sectionTitle, "isNew": record == nil, "editorHint": Kind.editorHint,
            "fields": DeskField.marked(try await Kind.fields(values, isNew: record == nil, in: self), with: refusal),
            "action": "/console/\(Kind.deskPath)/" + (record.map { "\($0.id.text)/edit" } ?? "new"),
        ]
        if let record {
            data["record"] = ["id": record.id.text, "heading": record.heading]
            data["version"] = values["version"] ?? EntityTag.of(Int64(record.version))
            data["isLive"] = record.liveVersion != nil
        }
        refusal.add(to: &data)
        let title = record.map { "Edit: \($0.heading)" } ?? "New \(Kind.noun)"
        return page("desk-form", title: title, status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }

    /// A record's page: its newest version's facts, the diff between two versions (by default
    /// the live one and the newest), the versions, and the moves its state and the role allow.
    fileprivate func deskPage<Kind: DeskKind>(
        _ kind: Kind.Type, _ id: UUID, issues: [FieldIssue] = [], values: [String: String] = [:]
    ) async throws -> ConsoleAnswer {
        let record = try await read(GetReviewed<Kind>(id: id))
        let versions = try await read(ReviewedVersions<Kind>(id: id))
        let writers = try await read(ReviewedWriters<Kind>(ids: Set(versions.map(\.writtenBy))))
        let texts = versions.map { (version: $0.version, text: Kind.text(of: $0.content)) }
        let wroteSinceLive = versions.contains {
            $0.version > (record.liveVersion ?? 0) && $0.writtenBy == principal.operatorID
        }
        var data: [String: Any] = [
            "path": Kind.deskPath, "section": Kind.sectionTitle, "record": DeskRow(record), "facts": record.deskFacts,
            "base": "/console/\(Kind.deskPath)/\(id.text)", "version": EntityTag.of(Int64(record.version)),
            "values": values,
            "versions": versions.map {
                DeskVersionRow(
                    version: $0.version, versionTitle: Kind.heading(of: $0.content),
                    writtenBy: writers[$0.writtenBy] ?? "a former operator",
                    writtenAt: ConsoleTime.text($0.writtenAt), isLive: $0.version == record.liveVersion)
            },
        ]
        data.merge(
            VersionComparison(texts, live: record.liveVersion, from: form.text("from"), to: form.text("to")).values
        ) { $1 }
        data.merge(ReviewMoves(record, wroteSinceLive: wroteSinceLive, may: may).values) { $1 }
        FormRefusal(issues).add(to: &data)
        return page("desk-item", title: record.heading, status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }

    /// Makes `move` with the form's version and comment; a refusal is shown on the record's page.
    fileprivate func deskMove<Kind: DeskKind>(_ kind: Kind.Type, _ move: ReviewMove) async throws -> ConsoleAnswer {
        let id = try routeID()
        return try await submit {
            if move == .archive { try form.confirm("archive") }
            _ = try await run(
                MoveReviewed<Kind>(id: id, move: move, comment: form.text("comment"), ifMatch: form["version"]))
            return redirect("/console/\(Kind.deskPath)/\(id.text)", flash: move.done)
        } refused: { issues in
            try await deskPage(Kind.self, id, issues: ReviewMoves.commentIssues(issues, of: move), values: form.values)
        }
    }
}

/// A record as the desk's lists show it.
struct DeskRow: TemplateValues {
    let id: String, heading: String, line: String, state: String, version: Int, updated: ShownTime
    let submitted: ShownTime?, reviewComment: String?, isLive: Bool

    init(_ record: some DeskKind) {
        (id, heading, line, state, version) = (
            record.id.text, record.heading, record.line, record.state.rawValue, record.version
        )
        updated = ConsoleTime.text(record.updatedAt)
        submitted = record.submittedAt.map(ConsoleTime.text)
        reviewComment = record.state == .draft ? record.reviewComment : nil
        isLive = record.liveVersion != nil
    }

    var templateValues: [(String, Any)] {
        [
            ("id", id), ("heading", heading), ("line", line), ("state", state), ("stateLabel", state.spaced),
            ("version", version), ("updated", updated), ("submitted", submitted as Any),
            ("reviewComment", reviewComment as Any), ("isLive", isLive),
        ]
    }
}

/// One version in a record's list of versions.
struct DeskVersionRow {
    let version: Int, versionTitle: String, writtenBy: String, writtenAt: ShownTime, isLive: Bool
}

extension String {
    /// A state's name with spaces ("in review").
    var spaced: String { replacingOccurrences(of: "_", with: " ") }
}
