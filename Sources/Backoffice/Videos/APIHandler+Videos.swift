import BackofficeAPI
import BackofficePlatform
import Foundation
import OpenAPIRuntime

extension WorkoutVideo {
    var api: Components.Schemas.Video {
        get throws {
            let c = content
            return Components.Schemas.Video(
                id: id.text, state: try .init(known: state.rawValue), version: version, liveVersion: liveVersion,
                authorId: authorID.text, title: c.title, description: c.description, category: c.category,
                trainerId: c.trainerID.text, trainerName: c.trainerName, durationSeconds: c.durationSeconds,
                level: try .init(known: c.level.rawValue), equipment: c.equipment, videoUrl: c.videoURL,
                coverUrl: c.coverURL, met: c.met, premium: c.premium, typicalKcal: c.typicalKilocalories,
                reviewComment: reviewComment, submittedAt: submittedAt, publishedAt: publishedAt,
                createdAt: createdAt, updatedAt: updatedAt, updatedBy: updatedBy.text, writtenBy: writtenBy.text)
        }
    }
}

extension CustomerVideo {
    var api: Components.Schemas.CustomerVideo {
        get throws {
            let c = content
            return Components.Schemas.CustomerVideo(
                id: id.text, version: version, title: c.title, description: c.description, category: c.category,
                trainerName: c.trainerName, durationSeconds: c.durationSeconds,
                level: try .init(known: c.level.rawValue), equipment: c.equipment, coverUrl: c.coverURL,
                premium: c.premium, plays: plays, videoUrl: plays ? c.videoURL : nil, kcalEstimate: kilocalories,
                typicalKcal: c.typicalKilocalories, publishedAt: publishedAt)
        }
    }
}

extension VideoContent {
    /// The content a draft sends, its trainer's id parsed.
    init(_ d: Components.Schemas.VideoDraft, trainerID: UUID) throws {
        self.init(
            title: d.title, description: d.description, category: d.category,
            trainerID: trainerID, trainerName: d.trainerName,
            durationSeconds: d.durationSeconds, level: try Level(known: d.level.rawValue), equipment: d.equipment ?? [],
            videoURL: d.videoUrl, coverURL: d.coverUrl, met: d.met, premium: d.premium)
    }
}

extension VideoChanges {
    /// The fields an update sends, its trainer's id parsed.
    init(_ u: Components.Schemas.VideoUpdate, trainerID: UUID?) throws {
        self.init()
        (title, description, category, trainerName) = (u.title, u.description, u.category, u.trainerName)
        self.trainerID = trainerID
        (durationSeconds, equipment, videoURL, coverURL) = (u.durationSeconds, u.equipment, u.videoUrl, u.coverUrl)
        level = try u.level.map { try VideoContent.Level(known: $0.rawValue) }
        (met, premium) = (u.met, u.premium)
    }
}

extension APIHandler {
    func createVideo(_ input: Operations.CreateVideo.Input) async throws -> Operations.CreateVideo.Output {
        let body: Components.Schemas.VideoDraft = try json(input.body)
        let content = try VideoContent(body, trainerID: try parseID(body.trainerId, "trainer_id"))
        return .created(try await written(CreateVideo(content: content), body: body, status: 201))
    }

    func updateVideo(_ input: Operations.UpdateVideo.Input) async throws -> Operations.UpdateVideo.Output {
        let body: Components.Schemas.VideoUpdate = try json(input.body)
        let id = try parseID(input.path.videoId, "video_id")
        let changes = try VideoChanges(body, trainerID: try body.trainerId.map { try parseID($0, "trainer_id") })
        return .ok(
            try await written(UpdateVideo(id: id, changes: changes, ifMatch: input.headers.ifMatch), on: id, body: body)
        )
    }

    func listVideoVersions(_ input: Operations.ListVideoVersions.Input) async throws
        -> Operations.ListVideoVersions.Output
    {
        let versions = try await read(
            ReviewedVersions<WorkoutVideo>(id: try parseID(input.path.videoId, "video_id")))
        return .ok(
            .init(
                body: .json(
                    .init(
                        items: try versions.map { v in
                            let c = v.content
                            return .init(
                                version: v.version, title: c.title, description: c.description, category: c.category,
                                trainerId: c.trainerID.text, trainerName: c.trainerName,
                                durationSeconds: c.durationSeconds, level: try .init(known: c.level.rawValue),
                                equipment: c.equipment, videoUrl: c.videoURL, coverUrl: c.coverURL, met: c.met,
                                premium: c.premium, writtenBy: v.writtenBy.text, writtenAt: v.writtenAt)
                        }))))
    }

    func listCustomerVideos(_ input: Operations.ListCustomerVideos.Input) async throws
        -> Operations.ListCustomerVideos.Output
    {
        let limit = try pageLimit(input.query.limit)
        let after = try Cursor.timeAndID(input.query.cursor).map { (time: $0.createdAt, id: $0.id) }
        let (videos, basis) = try await read(
            CustomerVideos(
                customerID: try parseID(input.path.customerId, "customer_id"), category: input.query.category,
                after: after, limit: limit + 1))
        let (items, next) = keysetPage(videos, limit: limit) { Cursor.timeAndID($0.publishedAt, $0.id) }
        let etag = EntityTag.digest("v", [basis, next ?? "-"] + items.map { "\($0.id.text):\($0.version)" })
        if EntityTag.matches(input.headers.ifNoneMatch, etag) { return .notModified(.init(headers: .init(eTag: etag))) }
        return .ok(
            .init(
                headers: .init(eTag: etag), body: .json(.init(items: try items.map { try $0.api }, nextCursor: next))))
    }

    func getCustomerVideo(_ input: Operations.GetCustomerVideo.Input) async throws
        -> Operations.GetCustomerVideo.Output
    {
        let videoID = try parseID(input.path.videoId, "video_id")
        let (videos, basis) = try await read(
            CustomerVideos(customerID: try parseID(input.path.customerId, "customer_id"), videoID: videoID))
        guard let video = videos.first else { throw DomainError.notFound("Video \(videoID.text)") }
        let etag = EntityTag.digest("v", [basis, "\(video.id.text):\(video.version)"])
        if EntityTag.matches(input.headers.ifNoneMatch, etag) { return .notModified(.init(headers: .init(eTag: etag))) }
        return .ok(.init(headers: .init(eTag: etag), body: .json(try video.api)))
    }
}
