import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// The resources the contract tests call operations on.
enum ContractFixture {
    /// The sku of partner A's good: no other tenant may see it anywhere, also in exported files.
    static let partnerASKU = "CONTRACT-A-1"

    struct IDs {
        /// Path parameter name → an id of a resource of partner A (or of the platform, for platform resources).
        var partnerA: [String: String]
    }

    static func make(_ env: TestEnvironment) async throws -> IDs {
        let partner = env.fixture.partners[0]
        let context = OperationContext.system("contract", policies: env.policies)
        let customer = try await env.customer()
        let locked = try await env.customer()
        _ = try await env.database.run(
            TransitionAccount(customerID: locked.id, move: .lock, reason: "for appeals"),
            context: env.context(.backendManager))
        let appeal = try await env.database.run(
            FileAppeal(customerID: locked.id, message: "please"), context: env.context(.appService))
        let staff = try await env.database.runAsSystem(
            CreateOperator(email: "contract@\(partner.slug).example", role: .partnerStaff, tenantID: partner.tenantID),
            context: context)
        let (token, _) = try await env.database.runAsSystem(
            CreateToken(operatorID: staff.id, name: "contract", expiresInHours: 1), context: context)
        let (client, _) = try await env.database.run(
            RegisterOAuthClient(
                name: "contract", role: .partnerStaff, tenantID: nil, scopes: ["orders:read"], allowedAddresses: nil),
            context: OperationContext(
                principal: partner.admin, requestID: "fixture", sourceIP: nil, policies: env.policies))
        let message = try await env.database.run(
            CreateMessage(title: "Contract", body: "A draft for the contract tests", severity: .info),
            context: env.context(.backendManager))
        let policy = try await env.database.run(
            PublishContentPolicy(slug: "contract-policy", title: "Contract", body: "Be kind."),
            context: env.context(.backendManager)
        ).0
        let application = try await env.database.runStaged(
            ApplyForShop(
                ShopApplicationForm(
                    legalName: "Contract Shop", contactEmail: "shop@contract.example", taxID: "12-3456789",
                    address: ShopAddress(
                        line1: "1 Main St", line2: "Suite 200", city: "Austin", region: "TX", postalCode: "73301",
                        country: "US"),
                    bankAccount: BankAccount(
                        holderName: "Contract Shop", routingNumber: "110000000",
                        accountNumber: SimulatedPaymentGateway.verifiedAccount)),
                payments: SimulatedPaymentGateway()),
            context: OperationContext(
                principal: .anonymous, requestID: "contract", sourceIP: nil, policies: env.policies))
        let good = try await env.database.run(
            CreateGood(
                sku: partnerASKU,
                fields: GoodFields(
                    name: "Contract good", description: nil, category: "contract", priceCents: 100, priceFitPoints: nil,
                    stock: 5, imageURLs: nil)),
            context: OperationContext(
                principal: partner.admin, requestID: "contract", sourceIP: nil, policies: env.policies))
        let endpoint = try await env.database.run(
            CreateWebhookEndpoint(
                target: try await OutboundTarget.check(
                    "https://hooks.shop.example/contract", rules: .serve, resolver: TestEnvironment.outbound.resolver),
                events: [.orderPlaced], description: "Contract"),
            context: OperationContext(
                principal: partner.admin, requestID: "contract", sourceIP: nil, policies: env.policies))
        let shop = try await ShopFixture.make(env)
        let order = try await env.database.runStaged(
            Checkout(
                CheckoutRequest(
                    customerID: shop.customer.id,
                    lines: [.init(goodID: shop.goods["BOTTLE"]!, quantity: 1, payIn: .usd, expectedUnitPrice: 2_500)],
                    shipping: Order.Shipping(
                        name: "Contract",
                        address: ShopAddress(
                            line1: "1 Main St", line2: "Suite 200", city: "Austin", region: "TX", postalCode: "73301",
                            country: "US")
                    ),
                    paymentMethod: SimulatedPaymentGateway.approvedCard), payments: SimulatedPaymentGateway(),
                idempotencyKey: nil),
            context: env.context(.appService))
        let now = env.clock.now()
        let challenge = try await env.database.run(
            CreateChallenge(
                .init(
                    name: "Contract", metric: "steps", aggregation: "sum", startsAt: now,
                    endsAt: now.addingTimeInterval(86_400),
                    rankBands: [(1, 1, 10, nil)], budgetPoints: 10)), context: env.context(.backendManager))
        let (article, live) = try await articles(env)
        let recommendation = try await env.database.run(
            CreateRecommendation(
                RecommendationDraft(
                    kind: .exercise, title: "Contract", body: "Walk **daily**.",
                    audience: Recommendation.Audience(subscriptions: [.active]), validFrom: nil, validUntil: nil)),
            context: env.context(.backendManager))
        let subscriber = try await SubscribeTests.returningCustomer(env)
        let subscribed = try await env.database.runStaged(
            Subscribe(
                customerID: subscriber.id, planID: "monthly", paymentMethod: SimulatedPaymentGateway.approvedMethod,
                payments: SimulatedPaymentGateway()), context: env.context(.appService))
        let invoice = try #require(
            try await env.ownerScalar(
                "SELECT id::text FROM invoices WHERE subscription_id = '\(subscribed.record.id.text)'",
                as: String.self))
        let foods = try await Self.foods(env)
        let video = try await Self.video(env)
        let recipe = try await Self.recipe(env, food: foods.live.id)
        let (plan, planRequest) = try await Self.plan(env, customer: customer.id)
        let held = try await env.database.run(
            ScreenContent(ForumContent(kind: .post, id: "contract-post", text: "kill yourself", authorID: customer.id)),
            context: env.context(.appService))
        let delivery = try #require(
            try await env.ownerScalar(
                "SELECT id::text FROM webhook_deliveries WHERE endpoint_id = '\(endpoint.id.text)' LIMIT 1",
                as: String.self))
        let view = try await env.database.run(
            SaveOrderView(name: "Contract view", status: .shipped, filter: OrderFilter()),
            context: OperationContext(
                principal: partner.admin, requestID: "fixture", sourceIP: nil, policies: env.policies))
        let approval = try await env.database.run(
            RequestApproval(change: AdjustFitPoints(customerID: customer.id, points: 20_000, reason: "Contract")),
            context: env.context(.backendManager))
        return IDs(partnerA: [
            "case_id": try #require(held.caseID).uuidString.lowercased(),
            "tenant_id": partner.tenantID.uuidString.lowercased(), "operator_id": staff.id.uuidString.lowercased(),
            "token_id": token.id.uuidString.lowercased(), "customer_id": customer.id.uuidString.lowercased(),
            "appeal_id": appeal.id.uuidString.lowercased(), "message_id": message.id.uuidString.lowercased(),
            "policy_slug": policy.slug, "challenge_id": challenge.id.uuidString.lowercased(),
            "application_id": application.id.uuidString.lowercased(), "good_id": good.id.uuidString.lowercased(),
            "order_id": order.detail.order.id.uuidString.lowercased(), "provider": "simulated",
            "article_id": article.id.uuidString.lowercased(), "article_slug": live.slug,
            "cover_url": "https://cdn.example.org/contract.jpg",
            "recommendation_id": recommendation.id.uuidString.lowercased(),
            "subscription_id": subscribed.record.id.text, "invoice_id": invoice,
            "food_id": foods.inReview.id.text, "gtin": foods.live.gtin?.description ?? "", "import_id": foods.importID,
            "video_id": video.id.text, "recipe_id": recipe.id.text, "plan_id": plan.id.text,
            "request_id": planRequest.id.text, "webhook_endpoint_id": endpoint.id.text,
            "webhook_delivery_id": delivery, "view_id": view.id.text, "client_id": client.id.text,
            "approval_id": approval.id.text,
        ])
    }

    /// An expert's article in review, and a published one.
    static func articles(_ env: TestEnvironment) async throws -> (inReview: Article, live: Article) {
        func write(_ title: String) async throws -> Article {
            let content = ArticleContent(
                title: title, summary: "For the contract tests", category: "sleep", body: "Sleep **well**.",
                coverURL: nil, byline: nil, tags: ["contract"])
            let article = try await env.database.run(
                CreateArticle(slug: nil, content: content), context: env.context(.expert))
            return try await env.database.run(
                MoveArticle(id: article.id, move: .submit), context: env.context(.expert))
        }
        let inReview = try await write("Contract in review")
        let live = try await env.database.run(
            MoveArticle(id: try await write("Contract live").id, move: .approve),
            context: env.context(.backendManager))
        return (inReview, live)
    }

    /// An expert's food in review, a live food with a barcode, and an import of the expert's waiting.
    static func foods(_ env: TestEnvironment) async throws -> (inReview: Food, live: Food, importID: String) {
        func write(_ gtin: String, _ name: String) async throws -> Food {
            let food = try await env.database.run(
                CreateFood(gtin: gtin, facts: FoodFacts(name: name, energyKcal: 100)), context: env.context(.expert))
            return try await env.database.run(MoveFood(id: food.id, move: .submit), context: env.context(.expert))
        }
        let inReview = try await write("96385074", "Contract food in review")
        let live = try await env.database.run(
            MoveFood(id: try await write("4006381333931", "Contract live food").id, move: .approve),
            context: env.context(.backendManager))
        let file = "code,product_name,energy-kcal_100g\n036000291452,Contract import,45\n"
        let imported = try await env.database.run(
            ImportFoods(
                contents: try FoodsFileReader.read(Array(file.utf8), format: .csv), allOrNothing: true,
                dryRun: false), context: env.context(.expert))
        return (inReview, live, try #require(imported.id).text)
    }

    /// A live recipe by the expert, of one live food.
    static func recipe(_ env: TestEnvironment, food: UUID) async throws -> Recipe {
        let content = RecipeContent(
            title: "Contract recipe", summary: "For the contract tests", body: "Stir.", servings: 1, tags: [],
            coverURL: nil, premium: false, ingredients: [Ingredient(foodID: food, quantity: 100, unit: "g")])
        let recipe = try await env.database.run(CreateRecipe(content: content), context: env.context(.expert))
        _ = try await env.database.run(MoveRecipe(id: recipe.id, move: .submit), context: env.context(.expert))
        return try await env.database.run(
            MoveRecipe(id: recipe.id, move: .approve), context: env.context(.backendManager))
    }

    /// A live video by the expert, its trainer.
    static func video(_ env: TestEnvironment) async throws -> WorkoutVideo {
        let trainer = try #require(env.fixture.principals[.expert]?.operatorID)
        let video = try await env.database.run(
            CreateVideo(content: VideosTests.content(trainer: trainer)), context: env.context(.expert))
        _ = try await env.database.run(MoveVideo(id: video.id, move: .submit), context: env.context(.expert))
        return try await env.database.run(
            MoveVideo(id: video.id, move: .approve), context: env.context(.backendManager))
    }

    /// An expert's exercise plan answering the customer's request it holds, and a meal-plan request
    /// of the customer waiting in the queue.
    static func plan(_ env: TestEnvironment, customer: UUID) async throws -> (Plan, PlanRequest) {
        let held = try await env.database.run(
            FilePlanRequest(customerID: customer, kind: .exercise, goal: "Run 5 km", dailyCalorieGoal: nil),
            context: env.context(.appService))
        _ = try await env.database.run(TakePlanRequest(requestID: held.id), context: env.context(.expert))
        let weeks = [ExerciseWeek(sessions: [PlannedSession(day: 1, videoID: nil, exercise: "Run", minutes: 30)])]
        let plan = try await env.database.run(
            CreatePlan(requestID: held.id, content: PlanContent(note: "Easy runs.", schedule: .exercise(weeks))),
            context: env.context(.expert))
        let waiting = try await env.database.run(
            FilePlanRequest(customerID: customer, kind: .meal, goal: "Eat better", dailyCalorieGoal: 2000),
            context: env.context(.appService))
        return (plan, waiting)
    }

    /// The operation's path with every `{parameter}` replaced by a fixture id.
    static func fill(_ operation: ContractOperation, ids: [String: String]) throws -> String {
        var path = operation.path
        for name in operation.pathParameters {
            let id = try #require(
                ids[name], "\(operation): no fixture for path parameter {\(name)}: add one to ContractFixture.make")
            path = path.replacingOccurrences(of: "{\(name)}", with: id)
        }
        return path
    }

    /// The shipped policies with failed authentications unlimited (the tests send many on purpose).
    static func policiesWithoutAuthenticationLimit() throws -> PolicySet {
        var texts = try PolicySet.texts(in: projectRoot.appendingPathComponent("policies"))
        texts["security.yaml"] = texts["security.yaml"]?.replacingOccurrences(
            of: "max_failures_per_address: 20", with: "max_failures_per_address: 100000"
        ).replacingOccurrences(of: "max_per_address: 10", with: "max_per_address: 100000")
        return try PolicySet.parse(texts)
    }
}
