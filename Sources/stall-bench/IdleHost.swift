import ArgumentParser
import Foundation
import StallMonitor

/// `stall-bench idle-host`: the RunLoop host of figure 15. It starts a StallMonitor on the main
/// loop (or none), prints `ready`, and lets the main RunLoop sleep; the figure reads its threads
/// from /proc meanwhile.
struct IdleHost: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idle-host", abstract: "Host process for the idle figure (prints ready, then idles).",
        shouldDisplay: false)

    @Flag(inversion: .prefixedNo, help: "Start a StallMonitor on the main loop.")
    var monitor = true

    @Option(help: "How long the main loop idles, in seconds.")
    var seconds = 10.0

    @Option(help: "Scratch directory for reports.")
    var reports: String

    func run() throws {
        var configuration = StallMonitor.Configuration(
            reportDirectory: URL(fileURLWithPath: reports, isDirectory: true))
        configuration.logger.logLevel = .notice
        let session = monitor ? try StallMonitor.start(configuration) : nil
        print("ready")
        fflush(nil)  // every stream: `stdout` is a global var Swift 6 will not read
        MainLoop.idle(seconds: seconds)
        session?.stop()
    }
}
