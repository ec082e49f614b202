import Foundation
import Logging
import StallMonitor

/// A host whose `main` is `async`: its main thread parks and its MainActor runs on Dispatch worker
/// threads, so no main RunLoop ever runs. It shows what StallMonitor does there (tests and the
/// README): started from a worker thread with `loop: .main` it refuses at once; started on the
/// main thread before the first `await`, it says within `loopSilenceWarning` that the loop never
/// ran.
///
///     async-main-host refuse   # exit 3, the error on stderr
///     async-main-host silent   # exit 0; the warning on stderr, then `watchedLoops` on stdout
@main
struct AsyncMainHost {
    static func main() async {
        let mode = CommandLine.arguments.dropFirst().first ?? "refuse"
        let reports = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("async-main-host-\(getpid())")
        defer { try? FileManager.default.removeItem(at: reports) }
        var configuration = StallMonitor.Configuration(reportDirectory: reports, loopSilenceWarning: .milliseconds(500))
        configuration.logger = Logger(label: "async-main-host") { StreamLogHandler.standardError(label: $0) }
        switch mode {
        case "silent":
            // Still on the main thread: the monitor arms, but RunLoop.main never runs.
            let monitor: StallMonitor
            do { monitor = try StallMonitor.start(configuration, loop: .main) } catch {
                FileHandle.standardError.write(Data("async-main-host: \(error)\n".utf8))
                exit(2)
            }
            try? await Task.sleep(for: .milliseconds(1_500))
            print("hasRun \(monitor.watchedLoops.map(\.hasRun))")
            await monitor.stop()
        default:
            try? await Task.sleep(for: .milliseconds(50))  // now on a Dispatch worker thread
            do {
                let monitor = try StallMonitor.start(configuration, loop: .main)
                print("started (unexpected)")
                await monitor.stop()
            } catch {
                FileHandle.standardError.write(Data("async-main-host: \(error)\n".utf8))
                exit(3)
            }
        }
    }
}
