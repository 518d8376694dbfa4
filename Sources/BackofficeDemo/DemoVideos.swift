import Backoffice
import BackofficePlatform
import Foundation
import PostgresNIO

/// The demo's workout videos: two in every category of `policies/videos.yaml` (a free one and a
/// premium one), led by the exercise expert, approved by the manager; one more waits in review.
/// MET values are the Compendium of Physical Activities' (2011) for the activity each shows.
extension DemoEnvironment {
    /// Per category: the activity's MET value and a title for the free and the premium video.
    static let demoVideos: [String: (met: Double, free: String, premium: String)] = [
        "treadmill": (9.8, "Treadmill basics, 20 minutes", "Treadmill intervals, 30 minutes"),
        "weights": (6.0, "Dumbbell full body", "Heavy lifting: push day"),
        "yoga": (2.5, "Morning hatha yoga", "Power yoga flow"),
        "hiit": (8.0, "HIIT starter", "HIIT 45"),
        "pilates": (3.0, "Pilates core", "Reformer-style pilates at home"),
        "stretching": (2.3, "Ten-minute stretch", "Deep stretch for runners"),
        "cycling": (6.8, "Easy spin", "Climb intervals on the bike"),
        "walking": (3.5, "Brisk walk indoors", "Walking workout, 45 minutes"),
        "dance": (7.3, "Dance cardio", "Dance party 40"),
        "boxing": (7.8, "Shadow boxing basics", "Boxing rounds"),
    ]

    /// Adds the videos once (when none exists), also to a demo database made before videos existed.
    static func seedVideosOnce(database: Database, policies: PolicySet) async throws {
        guard
            let (writer, reviewer) = try await reviewedSeed(
                "videos", by: experts[1], "demo-videos", database, policies),
            let trainerID = writer.principal.operatorID
        else { return }
        for category in policies.videos.categories {
            guard let (met, free, premium) = demoVideos[category] else { continue }
            for (title, isPremium) in [(free, false), (premium, true)] {
                let slug = title.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber }).joined(
                    separator: "-")
                let content = VideoContent(
                    title: title, description: "\(title), led by Sam Rivera.", category: category,
                    trainerID: trainerID, trainerName: "Sam Rivera", durationSeconds: isPremium ? 2_400 : 1_200,
                    level: isPremium ? .intermediate : .beginner, equipment: category == "weights" ? ["dumbbells"] : [],
                    videoURL: "https://cdn.healthtrack.example/videos/\(slug)/master.m3u8",
                    coverURL: "https://cdn.healthtrack.example/covers/\(slug).jpg", met: met, premium: isPremium)
                let video = try await database.run(CreateVideo(content: content), context: writer)
                _ = try await database.run(MoveVideo(id: video.id, move: .submit), context: writer)
                _ = try await database.run(MoveVideo(id: video.id, move: .approve), context: reviewer)
            }
        }
        let waiting = try await database.run(
            CreateVideo(
                content: VideoContent(
                    title: "Kettlebell swings", description: "Swings, goblet squats and halos.", category: "weights",
                    trainerID: trainerID, trainerName: "Sam Rivera", durationSeconds: 1_500, level: .advanced,
                    equipment: ["kettlebell"],
                    videoURL: "https://cdn.healthtrack.example/videos/kettlebell/master.m3u8",
                    coverURL: nil, met: 9.8, premium: true)), context: writer)
        _ = try await database.run(MoveVideo(id: waiting.id, move: .submit), context: writer)
    }
}
