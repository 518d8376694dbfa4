import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

extension Videos {
    /// The fields a video is written with (an option absent keeps the file's or the video's value).
    struct Fields: ParsableArguments {
        @Option(help: "The title.") var title: String?
        @Option(help: "What the workout is, for the app.") var description: String?
        @Option(help: "A category of policies/videos.yaml (treadmill, weights, yoga, …).") var category: String?
        @Option(help: "The expert who leads it (an operator id).") var trainerID: String?
        @Option(help: "The trainer's name as the app shows it.") var trainerName: String?
        @Option(help: "Its length in seconds (60–14400).") var durationSeconds: Int?
        @Option(help: "beginner, intermediate or advanced.") var level: Components.Schemas.VideoDraft.LevelPayload?
        @Option(help: "Equipment needed (a slug: mat, dumbbells); repeat for more.") var equipment: [String] = []
        @Option(help: "An https URL of an .m3u8 or .mp4 on the company's CDN.") var videoURL: String?
        @Option(help: "An https URL of the cover image (empty removes it).") var coverURL: String?
        @Option(help: "Its intensity in METs (the Compendium of Physical Activities' value, 1–25).") var met: Double?
        @Option(help: "true: plays only for subscribers.") var premium: Bool?
    }

    struct Create: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "A YAML or JSON video file (fields as the API's VideoDraft).") var file: String?
        @OptionGroup(title: "Fields") var fields: Fields

        func draft() throws -> Components.Schemas.VideoDraft {
            var d =
                try file.map { try readStructuredFile(Components.Schemas.VideoDraft.self, at: $0) }
                ?? .init(
                    title: "", description: "", category: "", trainerId: "", trainerName: "", durationSeconds: 0,
                    level: .beginner, videoUrl: "", met: 0, premium: false)
            if file == nil {
                guard fields.title != nil, fields.trainerID != nil, fields.videoURL != nil, fields.met != nil else {
                    throw CLIFailure.usage(
                        "error: give --file, or --title, --trainer-id, --video-url, --met and the rest")
                }
            }
            let f = fields
            (d.title, d.description, d.category) = (
                f.title ?? d.title, f.description ?? d.description, f.category ?? d.category
            )
            (d.trainerId, d.trainerName) = (f.trainerID ?? d.trainerId, f.trainerName ?? d.trainerName)
            (d.durationSeconds, d.level) = (f.durationSeconds ?? d.durationSeconds, f.level ?? d.level)
            (d.videoUrl, d.coverUrl, d.met) = (f.videoURL ?? d.videoUrl, f.coverURL ?? d.coverUrl, f.met ?? d.met)
            d.premium = f.premium ?? d.premium
            if !f.equipment.isEmpty { d.equipment = f.equipment }
            return d
        }

        func run() async throws {
            try await global.show(.single(CLIColumns.video)) { client in
                try await client.createVideo(
                    headers: .init(idempotencyKey: global.changeKey()), body: .json(try draft()))
            }
        }
    }
}

extension Components.Schemas.VideoDraft.LevelPayload: ExpressibleByArgument {}
