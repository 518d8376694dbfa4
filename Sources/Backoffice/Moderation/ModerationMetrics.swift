import BackofficePlatform
import Metrics

extension ServiceMetrics {
    /// A moderation decision by kind (the screen's `mask` and `hold`, a moderator's `dismiss`,
    /// `remove`, `warn`, `lock`); for a moderator's, how long its case waited (seconds from opening).
    static func moderationDecided(_ kind: String, after waited: Double? = nil) {
        series { Counter(label: "backoffice_moderation_decisions_total", dimensions: [("kind", kind)]) }.increment()
        if let waited {
            series { Metrics.Timer(label: "backoffice_moderation_time_to_decision_seconds") }.recordSeconds(waited)
        }
    }

    /// Open moderation cases, and how long the oldest has waited (seconds), as of the last count.
    static let moderationOpenCases = series { Gauge(label: "backoffice_moderation_open_cases") }
    static let moderationOldestOpenSeconds = series { Gauge(label: "backoffice_moderation_oldest_open_case_seconds") }
}
