import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// Shop applications (backend managers; auditors read them masked): the queue by state, an
    /// application's page with its eligibility checks, approve (a shop and its admin are made)
    /// and reject with a reason, confirmed — the API's use cases, audited.
    func registerShops(on group: RouterGroup<AppRequestContext>) {
        section("shop-applications", "Shop applications", needs: ListShopApplications.action, on: group) { console in
            let status = try ShopApplication.Status(known: console.form.text("status") ?? "pending")
            let (page, cursor) = try await newestFirstPage(after: console.form.text("cursor"), limit: Self.pageSize) {
                try await console.read(ListShopApplications(status: status, after: $0, limit: $1))
            }
            var data: [String: Any] = [
                "applications": page.map(ShopApplicationView.init), "hasApplications": !page.isEmpty,
                "state": status.rawValue,
                "tabsHTML": ConsoleNavigation.links(
                    ["pending", "approved", "rejected"].map {
                        .link(
                            href: "/console/shop-applications?status=\($0)", label: $0.capitalized,
                            current: $0 == status.rawValue)
                    }),
            ]
            if let cursor {
                data["next"] = ConsoleLinks.path(
                    "/console/shop-applications", ["status": status.rawValue, "cursor": cursor])
            }
            return console.page("shop-applications", title: "Shop applications", data)
        }
        get("shop-applications/{id}", on: group) { console in
            try await console.shopApplicationPage(try console.routeID(), issues: [])
        }
        post("shop-applications/{id}/approve", on: group) { console in
            let id = try console.routeID()
            return try await console.submit(reading: FormRefusal.reading(conflictFields: ["slug_taken": "slug"])) {
                let approval = try await console.run(
                    ApproveShopApplication(
                        applicationID: id, slug: console.form.text("slug"), reason: console.form.text("reason")))
                return console.redirect(
                    "/console/shop-applications/\(id.text)",
                    flash:
                        "Approved: the shop \(approval.tenant.slug) exists, with \(approval.admin.email) as its admin.")
            } refused: { issues in
                try await console.shopApplicationPage(id, issues: issues, values: console.form.values)
            }
        }
        post("shop-applications/{id}/reject", on: group) { console in
            let id = try console.routeID()
            return try await console.submit {
                try console.form.confirm("reject")
                _ = try await console.run(RejectShopApplication(applicationID: id, reason: console.form.text("reason")))
                return console.redirect(
                    "/console/shop-applications/\(id.text)", flash: "Rejected: the applicant is told why.")
            } refused: { issues in
                try await console.shopApplicationPage(id, issues: issues, values: console.form.values)
            }
        }
    }
}

extension ConsoleRequest {
    fileprivate func shopApplicationPage(_ id: UUID, issues: [FieldIssue], values: [String: String] = [:]) async throws
        -> ConsoleAnswer
    {
        let application = try await read(GetShopApplication(id: id))
        var data: [String: Any] = ["application": ShopApplicationView(application), "values": values]
        if application.status == .pending {
            if may(ApproveShopApplication.action) && application.eligible { data["canApprove"] = true }
            if may(RejectShopApplication.action) { data["canReject"] = true }
        }
        FormRefusal(issues).add(to: &data)
        return page(
            "shop-application", title: application.legalName, status: issues.isEmpty ? .ok : .unprocessableContent, data
        )
    }
}

/// A shop application as the queue and its page show it.
struct ShopApplicationView {
    struct Check { let check: String, passed: Bool, detail: String }
    let id: String, legalName: String, contactEmail: String, taxID: String, address: String, payout: String,
        status: String
    let submitted: ShownTime, eligible: Bool, checks: [Check], decisionReason: String?

    init(_ application: ShopApplication) {
        id = application.id.text
        legalName = application.legalName
        contactEmail = application.contactEmail
        taxID = application.taxID
        let a = application.address
        address = [a.line1, a.line2, a.city, a.region, a.postalCode, a.country].compactMap { $0 }.filter { !$0.isEmpty }
            .joined(separator: ", ")
        payout =
            "\(application.payoutAccountHolder), account ending \(application.payoutAccountLast4)"
            + (application.payoutAccountReference == nil ? " (not verified)" : " (verified)")
        status = application.status.rawValue
        submitted = ConsoleTime.text(application.submittedAt)
        eligible = application.eligible
        checks = application.checks.map {
            Check(check: $0.check.replacingOccurrences(of: "_", with: " "), passed: $0.passed, detail: $0.detail)
        }
        decisionReason = application.decisionReason
    }
}
