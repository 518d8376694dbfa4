import BackofficeAPI
import BackofficePlatform
import Foundation
import OpenAPIRuntime

extension APIHandler {
    /// Not idempotent by key: the document streams and is never stored; asking again is another
    /// audited export.
    func exportCustomerData(_ input: Operations.ExportCustomerData.Input) async throws
        -> Operations.ExportCustomerData.Output
    {
        let id = try parseID(input.path.customerId, "customer_id")
        let document = try await database.run(
            ExportCustomerData(database: database, customerID: id), context: context())
        return .ok(
            .init(
                headers: .init(cacheControl: "no-store"),
                body: .applicationVnd_healthtrack_customerData(
                    HTTPBody(document, length: .unknown, iterationBehavior: .single))))
    }
}
