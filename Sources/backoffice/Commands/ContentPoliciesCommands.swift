import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

extension ContentPolicies {
    struct Publish: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "A Markdown file with front matter `slug` and `title`.") var file: String

        func run() async throws {
            try await global.show(.single(CLIColumns.contentPolicy)) { client in
                let document = try MarkdownFile(path: file)
                let slug = document.text("slug") ?? URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
                return try await client.publishContentPolicy(
                    headers: .init(idempotencyKey: global.changeKey()),
                    body: .json(.init(slug: slug, title: document.text("title") ?? "", body: document.body ?? "")))
            }
        }
    }
}
