import ArgumentParser
import Foundation
import Logging
import StallMonitor
import StallReportModel

/// Runs the same workload on the main RunLoop twice with StallMonitor watching: once queued to
/// the loop directly, once through an IdleWorkQueue; prints both side by side.
@main
struct IdleWorkDemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idle-work-demo",
        abstract:
            "The same work on the main RunLoop, directly and through an IdleWorkQueue, with StallMonitor watching.",
        discussion: """
            Runs --items pieces of CPU work of --item-ms each on the main RunLoop, first queued to \
            the loop all at once (what RunLoop.main.perform or DispatchQueue.main.async do), then \
            through an IdleWorkQueue with a --budget-ms budget per pass. A timer asks to fire every \
            50 ms meanwhile and records how late it fires. Prints completion time, stalls \
            reported and timer lateness for both; exits 1 when the idle queue had a stall.

            Example: idle-work-demo --output ./stall-reports-idle-work
            """)

    @Option(name: .shortAndLong, help: "Directory for the stall reports (created 0700 if missing).")
    var output: String = "stall-reports-idle-work"

    @Option(help: "Pieces of work.")
    var items: Int = 200

    @Option(name: .customLong("item-ms"), help: "Milliseconds of CPU work per piece.")
    var itemMs: Int = 15

    @Option(name: .customLong("budget-ms"), help: "The idle queue's time budget per loop pass, in milliseconds.")
    var budgetMs: Int = 4

    @Option(name: .customLong("threshold-ms"), help: "StallMonitor's threshold in milliseconds.")
    var thresholdMs: Int = 250

    @Flag(help: "Print the results as JSON (one object with `direct` and `idleQueue`).")
    var json = false

    func validate() throws {
        guard items >= 1, items <= 100_000 else { throw ValidationError("--items must be in 1…100000") }
        guard itemMs >= 0, itemMs <= 10_000 else { throw ValidationError("--item-ms must be in 0…10000") }
        guard budgetMs >= 1 else { throw ValidationError("--budget-ms must be at least 1") }
        guard thresholdMs >= 1 else { throw ValidationError("--threshold-ms must be at least 1") }
    }

    func run() throws {
        let stalls = StallLog()
        let quiet = json
        let monitor = try StallMonitor.start(
            .init(
                threshold: .milliseconds(thresholdMs),
                reportDirectory: URL(fileURLWithPath: output, isDirectory: true),
                appVersion: "idle-work-demo 1.0",
                logger: Self.quietLogger,
                onReport: { report, url in
                    stalls.record(durationMs: report.durationMs)
                    if !quiet {
                        print(
                            "  wrote \(url.path)  \(Int(report.durationMs.rounded())) ms \(report.classification.rawValue)"
                        )
                    }
                }))
        defer { monitor.stop() }
        if !json {
            print(
                "idle-work-demo: \(items) items of \(itemMs) ms on the main RunLoop, StallMonitor threshold \(thresholdMs) ms, a timer asking for every 50 ms"
            )
            print("- directly on the loop (all queued at once)")
        }
        let direct = try WorkloadRun.run(
            idleQueue: false, items: items, itemMs: itemMs, budgetMs: budgetMs, monitor: monitor, stalls: stalls)
        if !json { print("- through IdleWorkQueue (\(budgetMs) ms budget per pass)") }
        let idle = try WorkloadRun.run(
            idleQueue: true, items: items, itemMs: itemMs, budgetMs: budgetMs, monitor: monitor, stalls: stalls)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(["direct": direct, "idleQueue": idle]), as: UTF8.self))
        } else {
            print(ComparisonTable.render(direct: direct, idle: idle, budgetMs: budgetMs))
        }
        if idle.stalls > 0 { throw ExitCode(1) }
    }
}

extension IdleWorkDemoCommand {
    /// A logger that passes on only what is above info: the demo prints each report itself.
    static var quietLogger: Logger {
        var logger = Logger(label: "idle-work-demo")
        logger.logLevel = .notice
        return logger
    }
}

/// The side-by-side text table.
enum ComparisonTable {
    static func render(direct: WorkloadResult, idle: WorkloadResult, budgetMs: Int) -> String {
        let rows: [(String, String, String)] = [
            ("completion time", ms(direct.completionMs), ms(idle.completionMs)),
            ("stalls reported", "\(direct.reports)", "\(idle.reports)"),
            (
                "longest stall", direct.reports > 0 ? ms(direct.longestStallMs) : "-",
                idle.reports > 0 ? ms(idle.longestStallMs) : "-"
            ),
            ("timer fires (every 50 ms asked)", "\(direct.timerFires)", "\(idle.timerFires)"),
            ("timer lateness p50", ms(direct.timerLatenessP50Ms), ms(idle.timerLatenessP50Ms)),
            ("timer lateness p99", ms(direct.timerLatenessP99Ms), ms(idle.timerLatenessP99Ms)),
            ("timer lateness max", ms(direct.timerLatenessMaxMs), ms(idle.timerLatenessMaxMs)),
            ("idle-queue passes", "-", "\(idle.idlePasses)"),
        ]
        let header = ("", "directly on the loop", "IdleWorkQueue, \(budgetMs) ms budget")
        let first = max(header.0.count, rows.map(\.0.count).max() ?? 0)
        let second = max(header.1.count, rows.map(\.1.count).max() ?? 0)
        func line(_ row: (String, String, String)) -> String {
            row.0.padding(toLength: first, withPad: " ", startingAt: 0) + "  "
                + String(repeating: " ", count: second - row.1.count) + row.1 + "  " + row.2
        }
        return ([header] + rows).map(line).joined(separator: "\n")
    }

    private static func ms(_ value: Double) -> String {
        value >= 100 ? "\(Int(value.rounded())) ms" : String(format: "%.1f ms", value)
    }
}
