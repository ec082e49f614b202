#if ServiceLifecycle
import StallMonitor

/// What ``StallMonitorService/init(_:)`` watches: the first set of loops this program lets a
/// monitor start for. An `async main` program (its main thread parked) takes the MainActor and
/// the pool; one whose main thread runs `RunLoop.main` is refused the MainActor (its main queue
/// drains in that run loop) and takes the main run loop and the pool; a platform that cannot
/// watch the pool keeps what it can.
enum ProgramWatch {
    /// The choices, best first.
    static let choices: [[StallMonitor.Loop]] = [
        [.mainActor, .concurrencyPool], [.main, .concurrencyPool], [.concurrencyPool], [.mainActor], [.main],
    ]

    /// Starts a monitor for the first choice that starts; throws the first choice's error, with
    /// every choice's reason, when none does.
    static func start(_ configuration: StallMonitor.Configuration) throws(StallMonitorError) -> StallMonitor {
        try configuration.validate()
        var reasons: [String] = []
        var first: StallMonitorError?
        for loops in choices {
            do {
                return try StallMonitor.start(configuration, loops: loops)
            } catch {
                first = first ?? error
                reasons.append("\(loops.map { "\($0)" }.joined(separator: " + ")): \(error.reason)")
            }
        }
        throw StallMonitorError(
            code: first?.code ?? .unsupportedLoop,
            reason: "no loop of this program can be watched (" + reasons.joined(separator: "; ") + ")")
    }
}
#endif
