import ArgumentParser
import Foundation
import Logging
import StallMonitor

/// `stall-bench memory-host`: the host process figure 7 measures. It runs the main loop idle,
/// stalls it for a while (a 100-frame recursion that spins), lets the report be written, and
/// prints its resident set size at each phase as one JSON line.
struct MemoryHost: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "memory-host", abstract: "Host process for the memory figure (prints RSS per phase as JSON).", shouldDisplay: false)

    @Flag(inversion: .prefixedNo, help: "Start a StallMonitor on the main loop.")
    var monitor = true

    @Flag(help: "symbolicateInProcess off: reports carry addresses, names come later from stallreport symbolicate.")
    var offlineSymbols = false

    @Option(help: "Length of the stall in milliseconds.")
    var stallMs = 3_000

    @Option(help: "Scratch directory for reports.")
    var reports: String

    /// RSS at each phase, in bytes, and its anonymous part (heap, stacks: the rest is mapped files).
    struct Phases: Codable {
        var idle: Double = 0
        var stall: Double = 0
        var afterReport: Double = 0
        var peak: Double = 0
        var idleAnon: Double = 0
        var stallAnon: Double = 0
        var afterReportAnon: Double = 0
    }

    func run() throws {
        var configuration = StallMonitor.Configuration(reportDirectory: URL(fileURLWithPath: reports, isDirectory: true))
        configuration.symbolicateInProcess = !offlineSymbols
        configuration.logger.logLevel = .notice  // no log line per report while measuring
        let session = monitor ? try StallMonitor.start(configuration) : nil
        var phases = Phases()
        let stall = Box((0.0, 0.0))
        let stallNanoseconds = UInt64(stallMs) * 1_000_000
        MainLoop.idle(seconds: 1)
        phases.idle = CStallClock.residentBytes()
        phases.idleAnon = CStallClock.statusField("RssAnon:")
        MainLoop.run(steps: [.init(gap: 0.05) {
            _ = Workloads.recurse(100) {
                Workloads.spin(until: CStallClock.now() + stallNanoseconds)
                stall.value = (CStallClock.residentBytes(), CStallClock.statusField("RssAnon:"))  // still inside the stall
            }
        }])
        (phases.stall, phases.stallAnon) = stall.value
        MainLoop.idle(seconds: 0.5)
        session?.flush()
        MainLoop.idle(seconds: 0.5)
        phases.afterReport = CStallClock.residentBytes()
        phases.afterReportAnon = CStallClock.statusField("RssAnon:")
        phases.peak = CStallClock.statusField("VmHWM:")
        session?.stop()
        let data = try JSONEncoder().encode(phases)
        print(String(decoding: data, as: UTF8.self))
    }
}
