import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird
import Synchronization

extension Console {
    /// Challenges (backend managers): the list, create, a challenge's page with publish, its live
    /// leaderboard (server-sent events), and settle: a dry run shown in place first, then the
    /// settlement, confirmed. `streams` admits the live leaderboards' streams.
    func registerChallenges(on group: RouterGroup<AppRequestContext>, streams: LiveStreams) {
        section("challenges", "Challenges", needs: ListChallenges.action, on: group) { console in
            let (page, cursor) = try await newestFirstPage(after: console.form.text("cursor"), limit: Self.pageSize) {
                try await console.read(ListChallenges(after: $0, limit: $1))
            }
            let now = console.now
            var data: [String: Any] = [
                "challenges": page.map { ChallengeView($0, now: now) }, "hasChallenges": !page.isEmpty,
                "canCreate": console.may(CreateChallenge.action),
            ]
            if let cursor { data["next"] = ConsoleLinks.path("/console/challenges", ["cursor": cursor]) }
            let pending = try await console.pendingApprovals(on: "challenges", "drafts")
            (data["pending"], data["hasPending"]) = (pending, !pending.isEmpty)
            return console.page("challenges", title: "Challenges", data)
        }
        get("challenges/new", on: group) { console in
            console.challengeForm(
                values: ["aggregation": "sum", "eligibility": "all", "tie_policy": "standard", "grace_hours": "24"],
                issues: [])
        }
        post("challenges/new", on: group) { console in
            return try await console.submit {
                let draft = CreateChallenge(try ChallengeForm(console.form).draft())
                guard case .done(let challenge) = try await console.runUnlessHeld(draft) else {
                    return console.redirect(
                        "/console/challenges",
                        flash:
                            "Held for a second person's approval: the draft is saved when another approver accepts it."
                    )
                }
                return console.redirect(
                    "/console/challenges/\(challenge.id.text)", flash: "Saved as a draft: publish it to open its board."
                )
            } refused: { issues in
                console.challengeForm(values: console.form.values, issues: ChallengeForm.issues(issues))
            }
        }
        get("challenges/{id}", on: group) { console in try await console.challengePage(try console.routeID()) }
        post("challenges/{id}/publish", on: group) { console in
            let id = try console.routeID()
            return try await console.submit {
                let challenge = try await console.run(
                    PublishChallenge(challengeID: id, ifMatch: console.form["version"]))
                return console.redirect(
                    "/console/challenges/\(id.text)",
                    flash: "Published: the board is \(challenge.state(at: console.now).rawValue).")
            } refused: { issues in
                try await console.challengePage(id, issues: issues)
            }
        }
        post("challenges/{id}/settle", on: group) { console in
            let id = try console.routeID()
            let dryRun = console.form["dry_run"] == "yes"
            return try await console.submit {
                if !dryRun { try console.form.confirm("settle") }
                let (_, settlement) = try await console.run(SettleChallenge(challengeID: id, dryRun: dryRun))
                if dryRun { return try await console.challengePage(id, preview: settlement) }
                return console.redirect(
                    "/console/challenges/\(id.text)",
                    flash:
                        """
                        Settled: paid \(Money.fitPoints(settlement.paid)) to \(settlement.payouts.count) of \
                        \(settlement.participants) participants.
                        """
                )
            } refused: { issues in
                try await console.challengePage(id, issues: issues)
            }
        }
        group.get("challenges/{id}/leaderboard/events") { request, context in
            try await leaderboardEvents(request, context, streams: streams)
        }
    }

    /// The live leaderboard as server-sent events: the board's first page (`event: board`, JSON)
    /// now and whenever it changes, read every `liveUpdates.interval` as the session's operator
    /// (so the stream stops when the session ends), for at most `liveUpdates.limit` (the idle
    /// timeout); then `event: end`. Opening the stream is the operator's doing and keeps the
    /// session alive; the periodic reads are not and do not (`touch: false`), so an open tab does
    /// not defeat the idle timeout. At most `liveUpdates.perSession` streams per session and
    /// `liveUpdates.total` in all (`LiveStreams`); past either, 503 with Retry-After.
    private func leaderboardEvents(
        _ request: Request, _ context: AppRequestContext, streams: LiveStreams
    ) async throws -> Response {
        guard let secret = sessionSecret(request, context) else { return signInFirst(request) }
        let id = try Self.id(context.parameters)
        let (database, policies, liveUpdates) = (database, policies, streams.limits)
        // A stream lasts no longer than an idle session would: an open page does not keep one alive.
        let (interval, limit, timers) = (
            liveUpdates.interval, min(liveUpdates.limit, .seconds(policies.console.idleTimeoutMinutes * 60)),
            liveUpdates.timers
        )
        @Sendable func board(touch: Bool) async throws -> (session: UUID, rows: String)? {
            try await database.consoleRequest(
                session: secret.hash, policy: policies.console, change: false, touch: touch
            ) {
                principal, transaction in
                guard let principal, let session = principal.sessionID else { return (nil, commit: false) }
                let console = page(
                    request, context, acting: principal, transaction: transaction, secret: secret,
                    form: ConsoleForm(query: nil))
                let (_, entries, _) = try await console.read(
                    ChallengeLeaderboard(challengeID: id, after: nil, limit: Self.pageSize))
                return ((session, try LeaderboardRowView.json(entries)), commit: false)
            }
        }
        // The first read authenticates the request and is the stream's first event.
        guard let first = try await board(touch: true) else { return Response(status: .unauthorized) }
        guard let stream = streams.open(for: first.session) else {
            var busy = Response(status: .serviceUnavailable, headers: [.retryAfter: "30"])
            ConsoleHeaders.apply(to: &busy)
            return busy
        }
        var response = Response(
            status: .ok, headers: [.contentType: "text/event-stream"],
            body: ResponseBody { writer in
                defer { streams.close(stream) }
                let clock = ContinuousClock()
                let deadline = clock.now + limit
                var (next, last): (String?, String?) = (first.rows, nil)
                while let rows = next {
                    try await writer.write(
                        ByteBuffer(string: rows == last ? ": unchanged\n\n" : "event: board\ndata: \(rows)\n\n"))
                    last = rows
                    try await timers.sleep(for: interval)
                    next = clock.now < deadline ? try await board(touch: false)?.rows : nil
                }
                try await writer.write(ByteBuffer(string: "event: end\ndata: {}\n\n"))
                try await writer.finish(nil)
            })
        ConsoleHeaders.apply(to: &response)
        return response
    }
}

/// The live streams open now, by session: `open` admits one within `LiveUpdates`' limits. In
/// memory, per process; a stream closes (its `defer`) however it ends.
final class LiveStreams: Sendable {
    struct Ticket: Sendable { let session: UUID }
    /// How many streams, for how long, read how often.
    let limits: LiveUpdates
    private let streams = Mutex<(bySession: [UUID: Int], total: Int)>(([:], 0))

    init(_ limits: LiveUpdates) { self.limits = limits }

    /// A ticket for a new stream of `session`; nil when the session has `perSession` open or the
    /// process has `total`.
    func open(for session: UUID) -> Ticket? {
        streams.withLock { state in
            guard state.total < limits.total, state.bySession[session, default: 0] < limits.perSession else {
                return nil
            }
            state.bySession[session, default: 0] += 1
            state.total += 1
            return Ticket(session: session)
        }
    }

    func close(_ ticket: Ticket) {
        streams.withLock { state in
            state.total -= 1
            let left = state.bySession[ticket.session, default: 1] - 1
            state.bySession[ticket.session] = left > 0 ? left : nil
        }
    }
}

extension ConsoleRequest {
    /// The create form, filled with `values`, each issue next to its field (422 with issues).
    fileprivate func challengeForm(values: [String: String], issues: [FieldIssue]) -> ConsoleAnswer {
        var data: [String: Any] = [
            "values": values, "metrics": ConsoleOption.all(Metric.allCases.map(\.rawValue), selected: values["metric"]),
            "aggregations": ConsoleOption.all(
                Challenge.Aggregation.allCases.map(\.rawValue), selected: values["aggregation"]),
            "eligibilities": ConsoleOption.all(
                Challenge.Eligibility.allCases.map(\.rawValue), selected: values["eligibility"]),
            "tiePolicies": ConsoleOption.all(
                Challenge.TiePolicy.allCases.map(\.rawValue), selected: values["tie_policy"]),
        ]
        FormRefusal(issues).add(to: &data)
        return page(
            "challenge-form", title: "New challenge", status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }

    /// A challenge's page: its terms, publish or settle as its state allows and the role may, its
    /// live board; a settlement's dry run (`preview`) or `issues` in place.
    fileprivate func challengePage(_ id: UUID, issues: [FieldIssue] = [], preview: Settlement? = nil) async throws
        -> ConsoleAnswer
    {
        let challenge = try await read(GetChallenge(id: id))
        let now = now
        let state = challenge.state(at: now)
        var data: [String: Any] = [
            "challenge": ChallengeView(challenge, now: now), "version": EntityTag.of(challenge.version),
        ]
        if state == .draft && may(PublishChallenge.action) { data["canPublish"] = true }
        if state != .draft && state != .settled && may(SettleChallenge.action) { data["canSettle"] = true }
        if state != .draft {
            let (_, entries, _) = try await read(
                ChallengeLeaderboard(challengeID: id, after: nil, limit: Console.pageSize))
            data["board"] = entries.map(LeaderboardRowView.init)
            data["hasBoard"] = !entries.isEmpty
            if state == .scheduled || state == .active || now < challenge.frozenAt {
                data["live"] = "/console/challenges/\(id.text)/leaderboard/events"
            }
        }
        if let preview {
            let names = try await read(CustomerNames(ids: preview.payouts.map(\.customerID)))
            var shown: [String: Any] = [
                "participants": preview.participants, "paid": Money.fitPoints(preview.paid),
                "budget": Money.fitPoints(preview.budget),
                "payouts": preview.payouts.map { payout -> [String: Any] in
                    [
                        "rank": payout.rank, "customer": payout.customerID.text,
                        "name": CustomerNames.shown(names[payout.customerID]),
                        "points": Money.fitPoints(payout.points),
                        "badges": payout.badges.joined(separator: ", "),
                    ]
                },
            ]
            if preview.shortfall > 0 { shown["shortfall"] = Money.fitPoints(preview.shortfall) }
            data["preview"] = shown
        }
        FormRefusal(issues).add(to: &data)
        return page("challenge", title: challenge.name, status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }
}
