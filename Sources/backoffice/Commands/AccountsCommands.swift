import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

extension Accounts {
    struct LoginAttempt: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Customer id.") var id: String
        @Flag(help: "The attempt failed.") var failed = false
        @Flag(help: "The attempt succeeded.") var succeeded = false

        func validate() throws {
            guard failed != succeeded else { throw ValidationError("Give exactly one of --failed or --succeeded.") }
        }

        func run() async throws {
            try await global.show(.single(CLIColumns.customer)) { client in
                try await client.reportLoginAttempt(
                    path: .init(customerId: id), headers: .init(idempotencyKey: global.changeKey()),
                    body: .json(.init(succeeded: succeeded)))
            }
        }
    }
}
