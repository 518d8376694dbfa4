import BackofficeConsole
import BackofficePlatform
import Foundation

/// Workout videos on the experts' desk: the catalog's fields, the category from the policy's
/// list, the trainer chosen among the active experts, and the typical calories shown as the
/// catalog computes them.
extension WorkoutVideo: DeskKind {
    static let sectionTitle = "Videos"
    typealias Creation = CreateReviewed<Self>
    static let deskTitle = "My videos"
    static let editorHint =
        "The video itself stays on the CDN: give its https address. It is saved as a draft; a manager reviews it."

    var heading: String { content.title }
    var line: String {
        let c = content
        return
            "\(c.category) · \(c.durationSeconds / 60) min · \(c.level.rawValue) · about \(c.typicalKilocalories) kcal"
            + (c.premium ? " · premium" : "")
    }

    var deskFacts: [DeskFact] {
        Self.lines(of: content).map { DeskFact(label: $0.label, value: $0.value) }
            + [DeskFact(label: "In the app", value: liveVersion.map { "version \($0)" } ?? "not yet")]
    }

    static func heading(of version: VideoContent) -> String { version.title }

    static func text(of version: VideoContent) -> String {
        lines(of: version).map { "\($0.label): \($0.value)" }.joined(separator: "\n")
    }

    private static func lines(of c: VideoContent) -> [(label: String, value: String)] {
        [
            ("Description", c.description), ("Category", c.category), ("Trainer", c.trainerName),
            ("Length", "\(c.durationSeconds) s (\(c.durationSeconds / 60) min)"), ("Level", c.level.rawValue),
            ("Equipment", c.equipment.isEmpty ? "none" : c.equipment.joined(separator: ", ")), ("Video", c.videoURL),
            ("Cover", c.coverURL ?? "none"), ("MET", DeskField.figure(c.met)),
            ("For 70 kg", "about \(c.typicalKilocalories) kcal"), ("Access", c.premium ? "premium" : "free"),
        ]
    }

    static func fields(_ values: [String: String], isNew: Bool, in console: ConsoleRequest) async throws
        -> [DeskField]
    {
        let value = { (name: String) in values[name] ?? "" }
        let trainers = try await console.read(VideoTrainers())
        return [
            DeskField(name: "title", label: "Title", kind: .text, value: value("title")),
            DeskField(
                name: "description", label: "Description", kind: .textarea, value: value("description"), rows: 5),
            DeskField(
                name: "category", label: "Category", kind: .select,
                options: ConsoleOption.all(console.context.policies.videos.categories, selected: values["category"])),
            DeskField(
                name: "trainer_id", label: "Trainer", kind: .select,
                options: trainers.map {
                    .choice(value: $0.id.text, label: $0.email, selected: values["trainer_id"] == $0.id.text)
                }),
            DeskField(
                name: "trainer_name", label: "Trainer's name in the app", kind: .text, value: value("trainer_name")),
            DeskField(
                name: "duration_seconds", label: "Length (seconds)", kind: .number, value: value("duration_seconds"),
                hint: "60 to 14400 (4 hours)."),
            DeskField(
                name: "level", label: "Level", kind: .select,
                options: ConsoleOption.all(VideoContent.Level.allCases.map(\.rawValue), selected: values["level"])),
            DeskField(
                name: "equipment", label: "Equipment (separated by commas)", kind: .text, value: value("equipment")),
            DeskField(
                name: "video_url", label: "Video address", kind: .url, value: value("video_url"),
                hint: "An https address of an HLS playlist (.m3u8) or an MP4 file on the company's CDN."),
            DeskField(name: "cover_url", label: "Cover image (optional)", kind: .url, value: value("cover_url")),
            DeskField(
                name: "met", label: "Intensity (MET)", kind: .number, value: value("met"),
                hint: "The Compendium of Physical Activities' value: yoga 2.5, cycling (moderate) 6.8, running 9.8."),
            DeskField(name: "premium", label: "Premium (subscribers only)", kind: .checkbox, value: value("premium")),
        ]
    }

    static func values(of video: WorkoutVideo) -> [String: String] {
        let c = video.content
        return [
            "title": c.title, "description": c.description, "category": c.category, "trainer_id": c.trainerID.text,
            "trainer_name": c.trainerName, "duration_seconds": String(c.durationSeconds), "level": c.level.rawValue,
            "equipment": c.equipment.joined(separator: ", "), "video_url": c.videoURL, "cover_url": c.coverURL ?? "",
            "met": DeskField.figure(c.met), "premium": c.premium ? "yes" : "",
        ]
    }

    static func written(from form: ConsoleForm, in console: ConsoleRequest) async throws -> VideoContent {
        var reader = DeskFormReader(form)
        let seconds = reader.number("duration_seconds", required: true)
        let met = reader.number("met", required: true)
        let trainer = form.text("trainer_id").flatMap(UUID.init(uuidString:))
        if trainer == nil { reader.refuse("trainer_id", "required", "choose the trainer") }
        let level = VideoContent.Level(rawValue: reader.text("level"))
        if level == nil { reader.refuse("level", "required", "choose a level") }
        try reader.check()
        return VideoContent(
            title: reader.text("title"), description: reader.text("description"), category: reader.text("category"),
            trainerID: trainer ?? UUID(), trainerName: reader.text("trainer_name"),
            durationSeconds: Int((seconds ?? 0).rounded()), level: level ?? .beginner,
            equipment: reader.words("equipment"), videoURL: reader.text("video_url"),
            coverURL: form.text("cover_url"), met: met ?? 0, premium: reader.ticked("premium"))
    }
}

/// The active experts, who may lead a video (`videos.create`: for the editor's choice), by e-mail.
struct VideoTrainers: Query {
    static let action: Action = "videos.create"

    func read(in unit: UnitOfWork) async throws -> [(id: UUID, email: String)] {
        try await unit.all(
            """
            SELECT id, email FROM operators WHERE role = 'expert' AND status = 'active'
            ORDER BY lower(email) LIMIT 500
            """
        ) { row in
            let c = try row.decode((UUID, String).self)
            return (c.0, c.1)
        }
    }
}
