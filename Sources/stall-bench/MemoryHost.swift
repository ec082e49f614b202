import ArgumentParser
import Foundation
import Logging
import StallMonitor

/// `stall-bench memory-host`: the host process figure 7 measures. It runs the main loop idle,
/// stalls it for a while (a 100-frame recursion that spins), lets the report be written, and
/// prints its resident set size at each phase as one JSON line.
struct MemoryHost: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "memory-host", abstract: "Host process for the memory figure (prints RSS per phase as JSON).",
        shouldDisplay: false)

    @Flag(inversion: .prefixedNo, help: "Start a StallMonitor on the main loop.")
    var monitor = true

    @Flag(help: "symbolicateInProcess off: reports carry addresses, names come later from stallreport symbolicate.")
    var offlineSymbols = false

    @Option(help: "Length of the stall in milliseconds.")
    var stallMs = 3_000

    @Option(help: "Scratch directory for reports.")
    var reports: String

    @Option(
        help:
            "Copy /proc/self/smaps into this directory at each phase (idle.smaps, stall.smaps, …), to see where memory goes."
    )
    var smapsDirectory: String?

    @Option(help: "The monitor's releaseCachesAfter in milliseconds; the last phase is measured after it has passed.")
    var releaseAfterMs = 2_000

    /// RSS at each phase, in bytes, and its anonymous part (heap, stacks: the rest is mapped files).
    struct Phases: Codable {
        var idle: Double = 0
        var stall: Double = 0
        var afterReport: Double = 0
        var peak: Double = 0
        var idleAnon: Double = 0
        var stallAnon: Double = 0
        var afterReportAnon: Double = 0
        var afterQuiet: Double = 0
        var afterQuietAnon: Double = 0
        /// The unwinding and debug-info libraries mapped at each phase (from /proc/self/maps).
        var librariesIdle: [String] = []
        var librariesStall: [String] = []
        var librariesAfterQuiet: [String] = []
        /// Lines of /proc/self/maps at each phase (libdw maps the files of the modules it reads).
        var mappingsIdle = 0
        var mappingsStall = 0
        var mappingsAfterReport = 0
        var mappingsAfterQuiet = 0
    }

    /// The heavy libraries the monitor may load, and how many mappings the process has.
    static func mappings() -> (libraries: [String], count: Int) {
        // Read to the end: /proc files report size 0, which Foundation's whole-file readers trust.
        guard let file = FileHandle(forReadingAtPath: "/proc/self/maps"), let data = try? file.readToEnd() else {
            return ([], 0)
        }
        try? file.close()
        let text = String(decoding: data, as: UTF8.self)
        let lines = text.split(separator: "\n")
        let names = ["libdw", "libelf", "libunwind"]  // files are named libdw-0.190.so, libunwind.so.8…
        let found = names.filter { name in
            lines.contains { $0.contains("/" + name + "-") || $0.contains("/" + name + ".so") }
        }
        return (found, lines.count)
    }

    private func saveSmaps(_ phase: String) {
        // Read to the end: /proc files report size 0, which Foundation's whole-file readers trust.
        guard let smapsDirectory, let file = FileHandle(forReadingAtPath: "/proc/self/smaps"),
            let data = try? file.readToEnd()
        else { return }
        try? file.close()
        try? data.write(to: URL(fileURLWithPath: smapsDirectory + "/" + phase + ".smaps"))
    }

    func run() throws {
        var configuration = StallMonitor.Configuration(
            reportDirectory: URL(fileURLWithPath: reports, isDirectory: true))
        configuration.symbolicateInProcess = !offlineSymbols
        configuration.logger.logLevel = .notice  // no log line per report while measuring
        configuration.releaseCachesAfter = .milliseconds(releaseAfterMs)
        let session = monitor ? try StallMonitor.start(configuration) : nil
        var phases = Phases()
        let stall = Box((0.0, 0.0))
        let stallNanoseconds = UInt64(stallMs) * 1_000_000
        MainLoop.idle(seconds: 1)
        phases.idle = CStallClock.residentBytes()
        phases.idleAnon = CStallClock.statusField("RssAnon:")
        (phases.librariesIdle, phases.mappingsIdle) = Self.mappings()
        saveSmaps("idle")
        let stallMappings = Box(([String](), 0))
        MainLoop.run(steps: [
            .init(gap: 0.05) {
                _ = Workloads.recurse(100) {
                    Workloads.spin(until: CStallClock.now() + stallNanoseconds)
                    // still inside the stall
                    stall.value = (CStallClock.residentBytes(), CStallClock.statusField("RssAnon:"))
                    stallMappings.value = Self.mappings()
                    saveSmaps("stall")
                }
            }
        ])
        (phases.stall, phases.stallAnon) = stall.value
        (phases.librariesStall, phases.mappingsStall) = stallMappings.value
        MainLoop.idle(seconds: 0.5)
        session?.flush()
        MainLoop.idle(seconds: 0.5)
        phases.afterReport = CStallClock.residentBytes()
        phases.afterReportAnon = CStallClock.statusField("RssAnon:")
        phases.mappingsAfterReport = Self.mappings().count
        saveSmaps("after-report")
        // Past the quiet period (the release runs at most half a period after it ends).
        MainLoop.idle(seconds: Double(releaseAfterMs) / 1_000 * 1.5 + 0.5)
        phases.afterQuiet = CStallClock.residentBytes()
        phases.afterQuietAnon = CStallClock.statusField("RssAnon:")
        (phases.librariesAfterQuiet, phases.mappingsAfterQuiet) = Self.mappings()
        saveSmaps("after-quiet")
        phases.peak = CStallClock.statusField("VmHWM:")
        session?.stop()
        let data = try JSONEncoder().encode(phases)
        print(String(decoding: data, as: UTF8.self))
    }
}
