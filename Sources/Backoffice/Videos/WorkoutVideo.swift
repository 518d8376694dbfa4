import BackofficePlatform
import Foundation
import PostgresNIO

/// A workout video led by one of the company's trainers: its newest version and where it stands
/// in review. The back office keeps the metadata; the video is on the company's CDN.
package struct WorkoutVideo: Sendable, Equatable, HoldsReviewStatus {
    package var review: ReviewStatus
    /// The newest version's content, and who wrote it.
    package var content: VideoContent
    package var writtenBy: UUID
}

/// What one version of a video says.
package struct VideoContent: Sendable, Equatable, Codable {
    package enum Level: String, Sendable, CaseIterable, Codable {
        case beginner, intermediate, advanced
    }

    package var title: String
    package var description: String
    package var category: String
    /// The expert who leads it, and the name the app shows ("Maya Lin").
    package var trainerID: UUID
    package var trainerName: String
    package var durationSeconds: Int
    package var level: Level
    package var equipment: [String]
    /// An https URL of an HLS playlist (`.m3u8`) or an MP4 file on a CDN host of the policy.
    package var videoURL: String
    package var coverURL: String?
    /// Its intensity in metabolic equivalents (the Compendium of Physical Activities' value).
    package var met: Double
    package var premium: Bool

    /// The content as written: texts trimmed, equipment in lower case.
    package init(
        title: String, description: String, category: String, trainerID: UUID, trainerName: String,
        durationSeconds: Int, level: Level, equipment: [String], videoURL: String, coverURL: String?, met: Double,
        premium: Bool
    ) {
        let trimmed = { (text: String) in text.trimmingCharacters(in: .whitespacesAndNewlines) }
        (self.title, self.description, self.category) = (trimmed(title), trimmed(description), category)
        (self.trainerID, self.trainerName, self.durationSeconds) = (trainerID, trimmed(trainerName), durationSeconds)
        (self.level, self.equipment) = (level, equipment.map { trimmed($0).lowercased() })
        (self.videoURL, self.coverURL) = (trimmed(videoURL), coverURL.map(trimmed).flatMap { $0.isEmpty ? nil : $0 })
        (self.met, self.premium) = (met, premium)
    }

    /// The body mass of the catalog's typical figure.
    package static let typicalBodyMassKg = 70.0

    /// The calories a person of 70 kg spends through the video, rounded to 10 kcal as the app shows
    /// an estimate ("about 310 kcal").
    package var typicalKilocalories: Int {
        Self.aboutTen(
            MET.kilocalories(met: met, bodyMassKg: Self.typicalBodyMassKg, hours: Double(durationSeconds) / 3600))
    }

    /// `kilocalories` to the nearest 10 (half up), as the app's estimates are shown.
    package static func aboutTen(_ kilocalories: Double) -> Int { Int((kilocalories / 10).rounded()) * 10 }

    /// Refuses content that breaks a rule, naming each field: the category and the video's host
    /// are the policy's (`policies/videos.yaml`).
    func validate(_ policy: VideosPolicy) throws {
        var validation = Validation()
        validation.text(title, "title", max: 200)
        validation.text(description, "description", max: 2000)
        validation.text(trainerName, "trainer_name", max: 120)
        validation.require(
            policy.categories.contains(category), "category", "unknown_category",
            "must be one of \(policy.categories.joined(separator: ", "))")
        validation.require(
            (60...14_400).contains(durationSeconds), "duration_seconds", "out_of_range", "must be 60–14400")
        validation.require(met.isFinite && (1...25).contains(met), "met", "out_of_range", "must be 1–25 (MET)")
        validation.require(
            equipment.count <= 10
                && equipment.allSatisfy { Validation.matches($0, length: 1...40, ArticleContent.slugByte) },
            "equipment", "invalid_equipment", "at most 10, each 1–40 lower-case letters, digits or dashes")
        let video = URL(string: videoURL)
        validation.require(
            videoURL.count <= 2000 && video?.scheme == "https" && policy.cdnHosts.contains(video?.host ?? "")
                && ["m3u8", "mp4"].contains(video?.pathExtension.lowercased() ?? ""),
            "video_url", "not_on_cdn",
            "must be an https URL of an .m3u8 or .mp4 on \(policy.cdnHosts.sorted().joined(separator: " or "))")
        if let coverURL {
            let cover = URL(string: coverURL)
            validation.require(
                coverURL.count <= 2000 && cover?.scheme == "https" && cover?.host != nil, "cover_url", "invalid_url",
                "must be an https URL")
        }
        try validation.check()
    }
}

/// How videos are stored (`videos` with its newest version from `video_versions`; platform sessions only).
extension WorkoutVideo: RowDecodable {
    package static let columns = "\(ReviewStatus.columns("w")), v.written_by, \(VideoContent.columns)"
    package static let source = "videos w JOIN video_versions v ON v.video_id = w.id AND v.version = w.version"

    package init(row: PostgresRow) throws {
        let cells = row.makeRandomAccess()
        self.init(
            review: try ReviewStatus(row: row), content: try VideoContent(cells, from: ReviewStatus.count + 1),
            writtenBy: try cells[ReviewStatus.count].decode(UUID.self))
    }
}

extension VideoContent: VersionContent {
    /// A version's content (alias `v`), as `init(_:from:)` reads it.
    package static let columns = """
        v.title, v.description, v.category, v.trainer_id, v.trainer_name, v.duration_seconds, v.level, v.equipment, \
        v.video_url, v.cover_url, v.met, v.premium
        """

    package init(_ cells: PostgresRandomAccessRow, from start: Int) throws {
        func cell<T: PostgresDecodable>(_ offset: Int, _: T.Type) throws -> T {
            try cells[start + offset].decode(T.self)
        }
        self.init(
            title: try cell(0, String.self), description: try cell(1, String.self), category: try cell(2, String.self),
            trainerID: try cell(3, UUID.self), trainerName: try cell(4, String.self),
            durationSeconds: try cell(5, Int.self), level: try Level(known: try cell(6, String.self)),
            equipment: try cell(7, [String].self), videoURL: try cell(8, String.self),
            coverURL: try cell(9, String?.self), met: try cell(10, Double.self), premium: try cell(11, Bool.self))
    }

    /// Adds version `version` of video `id` with this content, written by the principal now.
    package func store(as version: Int, of id: UUID, in unit: UnitOfWork) async throws {
        try await unit.execute(
            """
            INSERT INTO video_versions (video_id, version, title, description, category, trainer_id, trainer_name,
                duration_seconds, level, equipment, video_url, cover_url, met, premium, written_by, written_at)
            VALUES (\(id), \(version), \(title), \(description), \(category), \(trainerID), \(trainerName),
                \(durationSeconds),
                \(level.rawValue), \(equipment), \(videoURL), \(coverURL), \(met), \(premium),
                \(unit.principal.operatorID), \(unit.now))
            """)
    }
}
