import BackofficePlatform
import Foundation
import PostgresNIO

extension WorkoutVideo: VersionedReviewed {
    package typealias Content = VideoContent
    package static let auditTargetType = "video"
    package static let table = "videos"
    package static let alias = "w"
    package static let versionTable = "video_versions"
    package static let versionKey = "video_id"
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

extension VideoContent {
    /// Refuses content that breaks a rule (`validate`), or whose trainer is not an active expert
    /// (422 `not_a_trainer`).
    func check(in unit: UnitOfWork) async throws {
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
package struct CreateVideo: AuditedOperation {
    package static let action: Action = "videos.create"
    let content: VideoContent

    package init(content: VideoContent) { self.content = content }

    package func perform(in unit: UnitOfWork) async throws -> Audited<WorkoutVideo> {
        try await content.check(in: unit)
        let (id, writer) = (unit.newID(), unit.principal.operatorID)
        try await unit.execute(
            """
            INSERT INTO videos (id, author_id, state, version, created_at, updated_at, updated_by)
            VALUES (\(id), \(writer), 'draft', 1, \(unit.now), \(unit.now), \(writer))
            """)
        try await content.store(as: 1, of: id, in: unit)
        return try await WorkoutVideo.audited(Self.action, id, before: nil, in: unit)
    }
}

/// A writer saves a new version of a video (`videos.update`), as articles' writers do: `If-Match`
/// required (428, 412 naming who), a draft or a published video (its live version stays until
/// the new one is approved), never one in review or archived (409); an expert only its own (404).
package struct UpdateVideo: AuditedOperation {
    package static let action: Action = "videos.update"
    let videoID: UUID
    let changes: VideoChanges
    let ifMatch: String?

    package init(videoID: UUID, changes: VideoChanges, ifMatch: String?) {
        (self.videoID, self.changes, self.ifMatch) = (videoID, changes, ifMatch)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<WorkoutVideo> {
        let before = try await WorkoutVideo.forNewVersion(videoID, ifMatch: ifMatch, in: unit)
        let content = changes.applied(to: before.content)
        try await content.check(in: unit)
        if content == before.content { return .unchanged(before) }
        try await content.store(as: before.version + 1, of: before.id, in: unit)
        try await WorkoutVideo.newVersion(before.version + 1, of: before.id, in: unit)
        return try await WorkoutVideo.audited(Self.action, before.id, before: before, in: unit)
    }
}

/// The fields an update sends; those absent keep their value (an empty cover URL removes it).
package struct VideoChanges: Sendable {
    package var title, description, category, trainerName, videoURL, coverURL: String?
    package var trainerID: UUID?
    package var durationSeconds: Int?
    package var level: VideoContent.Level?
    package var equipment: [String]?
    package var met: Double?
    package var premium: Bool?

    package init() {}

    func applied(to c: VideoContent) -> VideoContent {
        VideoContent(
            title: title ?? c.title, description: description ?? c.description, category: category ?? c.category,
            trainerID: trainerID ?? c.trainerID, trainerName: trainerName ?? c.trainerName,
            durationSeconds: durationSeconds ?? c.durationSeconds,
            level: level ?? c.level, equipment: equipment ?? c.equipment, videoURL: videoURL ?? c.videoURL,
            coverURL: coverURL.map { $0.isEmpty ? nil : $0 } ?? c.coverURL, met: met ?? c.met,
            premium: premium ?? c.premium)
    }
}
