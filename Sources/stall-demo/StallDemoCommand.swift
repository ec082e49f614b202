import ArgumentParser
import CoreFoundation
import Foundation
import Logging
import StallMonitor
import StallReportModel
import Synchronization

/// A host app that runs the main RunLoop and stalls it in known ways, with StallMonitor watching.
@main
struct StallDemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stall-demo",
        abstract: "A host app that stalls its main RunLoop in known ways while StallMonitor watches.",
        discussion: """
            Runs the main RunLoop and, on timers, stalls it: a CPU spin (300 ms and 1.2 s), a wait on \
            a mutex held by another thread (500 ms), usleep (400 ms), a 200-frame recursion that \
            spins (400 ms), congestion (600 tasks of 1 ms), and short work below the threshold \
            (must not be reported). Prints each report's path and exits by itself.

            Example: stall-demo --output ./stall-reports --threshold-ms 250
            """)

    @Option(name: .shortAndLong, help: "Directory for the stall reports (created 0700 if missing).")
    var output: String = "stall-reports"

    @Option(name: .customLong("threshold-ms"), help: "Stall threshold in milliseconds.")
    var thresholdMs: Int = 250

    @Option(name: .customLong("only"), help: "Run only these scenarios (comma-separated names; see --list).")
    var only: String?

    @Flag(help: "Report stalls even while a debugger or tracer (strace, gdb) is attached.")
    var reportWhileDebugged = false

    @Flag(
        help:
            "Do not symbolicate in the process (keeps libdw out of memory); name frames later with `stallreport symbolicate`."
    )
    var deferSymbolication = false

    @Option(name: .customLong("park-seconds"), help: "How long park-spin and park-sleep park the main thread.")
    var parkSeconds: Double = 2

    @Option(
        name: .customLong("session-heartbeat-seconds"),
        help: "How often the session record is rewritten while nothing happens.")
    var sessionHeartbeatSeconds: Int = 60

    @Option(
        name: .customLong("max-report-files"),
        help: "Most stall reports kept in the output directory (oldest deleted first).")
    var maxReportFiles: Int = 1_000

    @Option(
        name: .customLong("prometheus"),
        help: ArgumentHelp(
            "Export the monitor's metrics through swift-prometheus and write them at exit to this file ('-': standard output).",
            valueName: "file"))
    var prometheus: String?

    @Flag(help: "Run without StallMonitor (a reference run for a debugger's or eu-stack's backtrace).")
    var noMonitor = false

    @Flag(help: "List the scenarios and exit.")
    var list = false

    func validate() throws {
        guard thresholdMs > 0 else { throw ValidationError("--threshold-ms must be positive") }
        guard parkSeconds > 0, parkSeconds <= 600 else { throw ValidationError("--park-seconds must be in (0, 600]") }
        guard maxReportFiles >= 1 else { throw ValidationError("--max-report-files must be at least 1") }
        guard sessionHeartbeatSeconds >= 1 else {
            throw ValidationError("--session-heartbeat-seconds must be at least 1")
        }
    }

    func run() throws {
        if list {
            for scenario in DemoScenario.all + DemoScenario.extras { print("\(scenario.name)\t\(scenario.summary)") }
            return
        }
        let selected = try DemoScenario.select(only)
        let directory = URL(fileURLWithPath: output, isDirectory: true)
        DemoScenario.parkSeconds = parkSeconds
        let export = prometheus.map { PrometheusExport(destination: $0) }
        export?.bootstrap()
        let monitor =
            noMonitor
            ? nil
            : try StallMonitor.start(
                .init(
                    threshold: .milliseconds(thresholdMs),
                    reportDirectory: directory,
                    appVersion: "stall-demo 1.0",
                    // The demo prints each report itself (onReport) and its problems at the end; the
                    // monitor's own info lines would say the same again on stderr.
                    logger: Self.quietLogger,
                    onReport: { report, url in
                        print(
                            "wrote \(url.path)  \(Int(report.durationMs.rounded())) ms \(report.classification.rawValue)  \(report.representativeFunction)"
                        )
                    },
                    maxReportFiles: maxReportFiles,
                    reportWhileDebugged: reportWhileDebugged,
                    symbolicateInProcess: !deferSymbolication,
                    sessionHeartbeatInterval: .seconds(sessionHeartbeatSeconds)))
        DemoScenario.monitor = monitor
        if let monitor {
            print(
                "stall-demo: pid \(getpid()), threshold \(thresholdMs) ms, signal \(monitor.signal), reports in \(directory.path)"
            )
        } else {
            print("stall-demo: pid \(getpid()), no monitor")
        }
        let finished = FinishFlag()
        DemoScenario.schedule(selected, gap: 0.4) {
            finished.set()
            CFRunLoopStop(CFRunLoopGetMain())  // makes run(mode:before:) return
        }
        while !finished.isSet {
            _ = RunLoop.main.run(mode: .default, before: .distantFuture)
        }
        guard let monitor else { return }
        monitor.stop()
        let statistics = monitor.statistics
        print(
            "stall-demo: \(statistics.stallsDetected) stalls detected, \(statistics.reportsWritten) reports written, \(statistics.samplesTaken) samples"
        )
        do {
            try export?.write()
        } catch {
            FileHandle.standardError.write(
                Data("stall-demo: cannot write the metrics to \(prometheus ?? "-"): \(error)\n".utf8))
            throw ExitCode(1)
        }
        if !statistics.errors.isEmpty {
            let last = statistics.lastError.map { "; last: \($0)" } ?? ""
            FileHandle.standardError.write(Data("stall-demo: errors \(statistics.errors)\(last)\n".utf8))
            throw ExitCode(3)
        }
    }

    /// A logger that passes on only what is above info (the monitor logs at info and below).
    static var quietLogger: Logger {
        var logger = Logger(label: "stall-demo")
        logger.logLevel = .notice
        return logger
    }
}

/// Set when the last scenario has run; read by the main loop between runs.
final class FinishFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
