@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// What a well-formed sample call of the contract tests answers an allowed role when that answer
/// is not a documented success: the fixture's state or the generic sample body makes a precise
/// refusal the right answer (a lock on a locked account is 409 `invalid_transition`; the
/// operations run in path order, so a token minted after its operator was disabled is refused).
/// Every allowed call not listed here must answer a documented success.
///
/// One line per call: operation id, role, status, problem code.
enum ContractOutcomes {
    static let refusals: [String: (status: Int, code: String)] = {
        var table: [String: (Int, String)] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            table[fields[0] + " " + fields[1]] = (Int(fields[2])!, fields[3])
        }
        return table
    }()

    /// The refusal expected for `operation` called by `role`, if any.
    static func refusal(_ operation: String, _ role: Role) -> (status: Int, code: String)? {
        refusals[operation + " " + role.rawValue]
    }

    private static let text = """
        createWebhookEndpoint platform_admin 422 validation_failed
        registerOAuthClient platform_admin 422 validation_failed
        registerOAuthClient partner_admin 422 validation_failed
        revokeOAuthClient partner_admin 409 invalid_transition
        issueOAuthClientSecret platform_admin 409 invalid_transition
        issueOAuthClientSecret partner_admin 409 invalid_transition
        createWebhookEndpoint partner_admin 422 validation_failed
        updateWebhookEndpoint platform_admin 422 validation_failed
        updateWebhookEndpoint partner_admin 422 validation_failed
        createArticle backend_manager 409 slug_taken
        createArticle expert 409 slug_taken
        updateArticle platform_admin 428 precondition_required
        updateArticle backend_manager 428 precondition_required
        updateArticle expert 428 precondition_required
        approveArticle backend_manager 409 invalid_transition
        archiveArticle backend_manager 409 invalid_transition
        sendBackArticle platform_admin 409 invalid_transition
        sendBackArticle backend_manager 409 invalid_transition
        submitArticle platform_admin 409 invalid_transition
        submitArticle backend_manager 409 invalid_transition
        submitArticle expert 409 invalid_transition
        decideModerationCase platform_admin 422 validation_failed
        decideModerationCase backend_manager 422 validation_failed
        decideModerationCase moderator 422 validation_failed
        takeModerationCase backend_manager 409 assigned_to_other
        takeModerationCase moderator 409 assigned_to_other
        reportContent platform_admin 422 validation_failed
        reportContent app_service 422 validation_failed
        syncHealthProfile platform_admin 422 validation_failed
        syncHealthProfile app_service 422 validation_failed
        getHealthProfile platform_admin 422 validation_failed
        getHealthProfile backend_manager 422 validation_failed
        getHealthProfile auditor 422 validation_failed
        createRecommendation platform_admin 422 validation_failed
        createRecommendation backend_manager 422 validation_failed
        updateRecommendation platform_admin 428 precondition_required
        updateRecommendation backend_manager 428 precondition_required
        publishRecommendation backend_manager 409 invalid_transition
        retractRecommendation backend_manager 409 invalid_transition
        ingestActivity platform_admin 422 validation_failed
        ingestActivity app_service 422 validation_failed
        resolveAppeal backend_manager 409 invalid_transition
        approveChange backend_manager 409 approval_decided
        rejectChange platform_admin 409 approval_decided
        rejectChange backend_manager 409 approval_decided
        getApproval partner_admin 404 not_found
        approveChange partner_admin 404 not_found
        rejectChange partner_admin 404 not_found
        createBadge platform_admin 422 validation_failed
        createBadge backend_manager 422 validation_failed
        createChallenge platform_admin 422 validation_failed
        createChallenge backend_manager 422 validation_failed
        publishChallenge backend_manager 409 invalid_transition
        checkout platform_admin 422 validation_failed
        checkout app_service 422 validation_failed
        subscribe platform_admin 422 validation_failed
        subscribe app_service 422 validation_failed
        cancelSubscription backend_manager 409 invalid_transition
        scheduleSubscriptionCancel platform_admin 409 invalid_transition
        scheduleSubscriptionCancel app_service 409 invalid_transition
        resumeSubscription platform_admin 409 invalid_transition
        resumeSubscription app_service 409 invalid_transition
        updateSubscriptionPaymentMethod platform_admin 422 validation_failed
        updateSubscriptionPaymentMethod app_service 422 validation_failed
        changeSubscriptionPlan platform_admin 422 validation_failed
        changeSubscriptionPlan app_service 422 validation_failed
        getEntitlements platform_admin 404 not_found
        getEntitlements backend_manager 404 not_found
        getEntitlements app_service 404 not_found
        syncCustomer platform_admin 422 validation_failed
        syncCustomer app_service 422 validation_failed
        deleteCustomer backend_manager 409 invalid_transition
        fileAppeal platform_admin 409 invalid_transition
        fileAppeal app_service 409 invalid_transition
        adjustFitPoints platform_admin 409 account_deleted
        adjustFitPoints backend_manager 409 account_deleted
        lockCustomer platform_admin 409 invalid_transition
        lockCustomer backend_manager 409 invalid_transition
        reportLoginAttempt platform_admin 409 invalid_transition
        reportLoginAttempt app_service 409 invalid_transition
        reportPasswordReset platform_admin 409 invalid_transition
        reportPasswordReset app_service 409 invalid_transition
        restoreCustomer backend_manager 409 invalid_transition
        unlockCustomer platform_admin 409 invalid_transition
        unlockCustomer backend_manager 409 invalid_transition
        getEarningRules platform_admin 404 not_found
        getEarningRules backend_manager 404 not_found
        getEarningRules auditor 404 not_found
        getEarningRules app_service 404 not_found
        createGood platform_admin 422 validation_failed
        createGood partner_staff 409 sku_taken
        approveFood backend_manager 409 invalid_transition
        approveFoodImport backend_manager 409 invalid_transition
        archiveFood backend_manager 409 invalid_transition
        createFood backend_manager 409 barcode_taken
        createFood expert 409 barcode_taken
        createFood platform_admin 409 barcode_taken
        importFoods backend_manager 422 malformed_file
        importFoods expert 422 malformed_file
        importFoods platform_admin 422 malformed_file
        sendBackFood backend_manager 409 invalid_transition
        sendBackFood platform_admin 409 invalid_transition
        submitFood backend_manager 409 invalid_transition
        submitFood expert 409 invalid_transition
        submitFood platform_admin 409 invalid_transition
        updateFood backend_manager 428 precondition_required
        updateFood expert 428 precondition_required
        updateFood platform_admin 428 precondition_required
        approveVideo backend_manager 409 invalid_transition
        approveVideo platform_admin 409 invalid_transition
        archiveVideo backend_manager 409 invalid_transition
        createVideo backend_manager 422 validation_failed
        createVideo expert 422 validation_failed
        createVideo platform_admin 422 validation_failed
        sendBackVideo backend_manager 409 invalid_transition
        sendBackVideo platform_admin 409 invalid_transition
        submitVideo backend_manager 409 invalid_transition
        submitVideo expert 409 invalid_transition
        submitVideo platform_admin 409 invalid_transition
        updateVideo backend_manager 428 precondition_required
        updateVideo expert 428 precondition_required
        updateVideo platform_admin 428 precondition_required
        approveRecipe backend_manager 409 invalid_transition
        approveRecipe platform_admin 409 invalid_transition
        archiveRecipe backend_manager 409 invalid_transition
        createRecipe backend_manager 422 validation_failed
        createRecipe expert 422 validation_failed
        getHealthProfile expert 422 validation_failed
        filePlanRequest platform_admin 404 not_found
        filePlanRequest app_service 404 not_found
        listCustomerPlans platform_admin 404 not_found
        listCustomerPlans app_service 404 not_found
        takePlanRequest backend_manager 409 assigned_to_other
        takePlanRequest expert 404 not_found
        createPlan platform_admin 422 validation_failed
        createPlan backend_manager 422 validation_failed
        createPlan expert 404 not_found
        updatePlan platform_admin 428 precondition_required
        updatePlan backend_manager 428 precondition_required
        updatePlan expert 428 precondition_required
        sendPlan platform_admin 409 not_held
        sendPlan backend_manager 409 not_held
        createRecipe platform_admin 422 validation_failed
        getCustomerRecipe app_service 404 not_found
        getCustomerRecipe platform_admin 404 not_found
        listCustomerRecipes app_service 404 not_found
        listCustomerRecipes platform_admin 404 not_found
        sendBackRecipe backend_manager 409 invalid_transition
        sendBackRecipe platform_admin 409 invalid_transition
        submitRecipe backend_manager 409 invalid_transition
        submitRecipe expert 409 invalid_transition
        submitRecipe platform_admin 409 invalid_transition
        updateRecipe backend_manager 428 precondition_required
        updateRecipe expert 428 precondition_required
        updateRecipe platform_admin 428 precondition_required
        importGoods platform_admin 422 malformed_file
        importGoods partner_admin 422 malformed_file
        importGoods partner_staff 422 malformed_file
        updateGood platform_admin 428 precondition_required
        updateGood partner_admin 428 precondition_required
        updateGood partner_staff 428 precondition_required
        archiveGood partner_admin 409 invalid_transition
        archiveGood partner_staff 409 invalid_transition
        createMessage platform_admin 422 validation_failed
        createMessage backend_manager 422 validation_failed
        publishMessage backend_manager 409 invalid_transition
        retractMessage backend_manager 409 invalid_transition
        createOperator platform_admin 422 validation_failed
        createOperator partner_admin 422 validation_failed
        disableOperator partner_admin 409 invalid_transition
        inviteOperator platform_admin 409 invalid_transition
        inviteOperator partner_admin 409 invalid_transition
        acceptOrder partner_admin 409 invalid_transition
        acceptOrder partner_staff 409 invalid_transition
        cancelOrder partner_admin 409 invalid_transition
        cancelOrder partner_staff 409 invalid_transition
        deliverOrder platform_admin 409 invalid_transition
        deliverOrder partner_admin 409 invalid_transition
        deliverOrder partner_staff 409 invalid_transition
        refundOrder platform_admin 409 invalid_transition
        refundOrder partner_admin 409 invalid_transition
        archiveGoodsInBulk platform_admin 422 validation_failed
        archiveGoodsInBulk partner_admin 422 validation_failed
        archiveGoodsInBulk partner_staff 422 validation_failed
        lockCustomersInBulk platform_admin 422 validation_failed
        lockCustomersInBulk backend_manager 422 validation_failed
        messageCustomersInBulk platform_admin 422 validation_failed
        messageCustomersInBulk backend_manager 422 validation_failed
        sendCustomerNotice platform_admin 409 invalid_transition
        sendCustomerNotice backend_manager 409 invalid_transition
        saveOrderView platform_admin 422 validation_failed
        saveOrderView backend_manager 422 validation_failed
        saveOrderView auditor 422 validation_failed
        saveOrderView partner_admin 422 validation_failed
        saveOrderView partner_staff 422 validation_failed
        deleteOrderView platform_admin 404 not_found
        deleteOrderView backend_manager 404 not_found
        deleteOrderView auditor 404 not_found
        deleteOrderView partner_staff 404 not_found
        moveOrdersInBulk platform_admin 422 validation_failed
        moveOrdersInBulk partner_admin 422 validation_failed
        moveOrdersInBulk partner_staff 422 validation_failed
        refundOrderPart platform_admin 422 validation_failed
        refundOrderPart partner_admin 422 validation_failed
        shipOrder platform_admin 409 invalid_transition
        shipOrder partner_admin 409 invalid_transition
        shipOrder partner_staff 409 invalid_transition
        approveShopApplication backend_manager 409 invalid_transition
        rejectShopApplication platform_admin 409 invalid_transition
        rejectShopApplication backend_manager 409 invalid_transition
        createTenant platform_admin 409 slug_taken
        createToken platform_admin 409 invalid_transition
        createToken partner_admin 409 invalid_transition
        revokeToken partner_admin 409 invalid_transition
        """
}
