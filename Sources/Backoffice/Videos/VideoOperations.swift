import BackofficePlatform
import Foundation
import PostgresNIO

extension WorkoutVideo: VersionedReviewed, WrittenReviewed {
    package typealias Content = VideoContent
    package var written: VideoContent { content }
    package static let alias = "w"
    package static let noun = "video"

    /// What the audit event keeps of a video: where it stands and what it is called.
    package var snapshot: String {
        get throws {
            struct Snapshot: Encodable {
                let state: String, version: Int, liveVersion: Int?, title: String, premium: Bool
            }
            return try AuditRecord.json(
                Snapshot(
                    state: state.rawValue, version: version, liveVersion: liveVersion, title: content.title,
                    premium: content.premium))
        }
    }
}

/// A video reviewed as the experts' content is (`videos.submit`, `.approve`, `.send_back`, `.archive`).
package typealias MoveVideo = MoveReviewed<WorkoutVideo>

extension VideoContent: WrittenContent {
    /// Refuses content that breaks a rule (`validate`), or whose trainer is not an active expert
    /// (422 `not_a_trainer`).
    package func check(in unit: UnitOfWork) async throws {
        try validate(unit.context.policies.videos)
        let trainer = try await unit.first(
            "SELECT true FROM operators WHERE id = \(trainerID) AND role = 'expert' AND status = 'active'"
        ) { try $0.decode(Bool.self) }
        guard trainer != nil else {
            throw DomainError.invalid("trainer_id", "not_a_trainer", "must be an active expert")
        }
    }
}

/// An expert or a manager adds a video (`videos.create`): a draft, version 1.
package typealias CreateVideo = CreateReviewed<WorkoutVideo>
/// A writer saves a new version of a video (`videos.update`).
package typealias UpdateVideo = UpdateReviewed<WorkoutVideo, VideoChanges>

/// The fields an update sends; those absent keep their value (an empty cover URL removes it).
package struct VideoChanges: ContentChanges {
    package var title, description, category, trainerName, videoURL, coverURL: String?
    package var trainerID: UUID?
    package var durationSeconds: Int?
    package var level: VideoContent.Level?
    package var equipment: [String]?
    package var met: Double?
    package var premium: Bool?

    package init() {}

    package func applied(to c: VideoContent) -> VideoContent {
        VideoContent(
            title: title ?? c.title, description: description ?? c.description, category: category ?? c.category,
            trainerID: trainerID ?? c.trainerID, trainerName: trainerName ?? c.trainerName,
            durationSeconds: durationSeconds ?? c.durationSeconds,
            level: level ?? c.level, equipment: equipment ?? c.equipment, videoURL: videoURL ?? c.videoURL,
            coverURL: coverURL.map { $0.isEmpty ? nil : $0 } ?? c.coverURL, met: met ?? c.met,
            premium: premium ?? c.premium)
    }
}
