import Backoffice
import BackofficePlatform
import Foundation
import PostgresNIO

/// The demo's content for the app: a nutrition expert and an exercise expert, each with articles
/// in every state (live, live with a new version in the works, in review, sent back with the
/// manager's comment, a draft, archived), and the manager's recommendations (two published, one a
/// draft), made through the operations as each person would: the expert writes and submits, the
/// manager approves, sends back, archives, and publishes recommendations.
extension DemoEnvironment {
    static let experts = ["nutrition@healthtrack.example", "exercise@healthtrack.example"]

    /// One demo article of `Data/articles.json` (by the expert's email): its words, and how far it has come.
    struct DemoArticle: Decodable {
        enum Stage: String, Decodable { case draft, sentBack, inReview, published, publishedWithNewDraft, archived }
        let title: String, summary: String, category: String, tags: [String], body: String, stage: Stage
    }

    /// Adds the experts and their articles once (when the first expert is missing), also to a
    /// demo database made before experts existed.
    static func seedArticlesOnce(database: Database, policies: PolicySet) async throws {
        let context = OperationContext.system("demo-articles", policies: policies)
        let emails = experts + ["manager@healthtrack.example"]
        let present = try await survey(database) { try await $0.operators(emails) }
        guard present[experts[0]] == nil, let manager = present["manager@healthtrack.example"] else { return }
        let reviewer = context.acting(as: principal(manager))
        try await seedRecommendations(by: reviewer, database: database)
        let demoArticles: [String: [DemoArticle]] = try DemoData.load("articles")
        for email in experts {
            let expert = try await database.runAsSystem(
                CreateOperator(email: email, role: .expert, tenantID: nil), context: context)
            let writer = context.acting(as: principal(expert))
            for article in demoArticles[email] ?? [] {
                try await write(article, writer: writer, reviewer: reviewer, database: database)
            }
        }
    }

    /// Two published recommendations (one for active subscribers, one for every customer) and a draft
    /// for lapsed subscribers.
    private static func seedRecommendations(by manager: OperationContext, database: Database) async throws {
        let drafts: [(RecommendationDraft, publish: Bool)] = [
            (
                RecommendationDraft(
                    kind: .exercise, title: "A 10-minute walk after dinner",
                    body: "A short walk after your evening meal helps **blood sugar** and sleep.",
                    audience: .init(subscriptions: [.active]), validFrom: nil, validUntil: nil), true
            ),
            (
                RecommendationDraft(
                    kind: .nutrition, title: "Half a plate of vegetables",
                    body: "Fill half your plate with vegetables at lunch and dinner.", audience: .init(),
                    validFrom: nil, validUntil: nil), true
            ),
            (
                RecommendationDraft(
                    kind: .exercise, title: "Back to it: three short sessions",
                    body: "Three 15-minute sessions this week are enough to restart the habit.",
                    audience: .init(subscriptions: [.lapsed]), validFrom: nil, validUntil: nil), false
            ),
        ]
        for (draft, publish) in drafts {
            let made = try await database.run(CreateRecommendation(draft), context: manager)
            if publish { _ = try await database.run(PublishRecommendation(id: made.id), context: manager) }
        }
    }

    static func principal(_ person: Operator) -> Principal {
        Principal(operatorID: person.id, role: person.role, tenantID: person.tenantID, tokenID: nil)
    }

    /// `article` written by `writer` and taken to its stage, reviewed by `reviewer`.
    private static func write(
        _ article: DemoArticle, writer: OperationContext, reviewer: OperationContext, database: Database
    ) async throws {
        let content = ArticleContent(
            title: article.title, summary: article.summary, category: article.category, body: article.body,
            coverURL: nil, byline: nil, tags: article.tags)
        let id = try await database.run(CreateArticle(slug: nil, content: content), context: writer).id
        func move(_ move: ReviewMove, _ by: OperationContext, _ comment: String? = nil) async throws {
            _ = try await database.run(MoveArticle(id: id, move: move, comment: comment), context: by)
        }
        guard article.stage != .draft else { return }
        try await move(.submit, writer)
        switch article.stage {
        case .draft, .inReview: return
        case .sentBack:
            try await move(.sendBack, reviewer, "Please add sources for the figures, and a short summary at the end.")
        case .published: try await move(.approve, reviewer)
        case .publishedWithNewDraft:
            try await move(.approve, reviewer)
            _ = try await database.run(
                UpdateArticle(
                    id: id, changes: ArticleChanges(body: article.body + "\n\nIn hot weather, drink more."),
                    ifMatch: "\"1\""),  // the entity tag of version 1
                context: writer)
        case .archived:
            try await move(.approve, reviewer)
            try await move(.archive, reviewer, "Last winter's challenge has ended.")
        }
    }
}
