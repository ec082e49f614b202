import ArgumentParser
import Foundation

/// `stall-bench run` (the default): runs the selected figures and writes the results table.
struct RunFigures: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run figures (all by default) and write latest.md and latest.json.")

    @Option(
        name: .customLong("figure"), parsing: .upToNextOption,
        help: "Figures to run, by number or name (see `stall-bench list`); repeatable or comma-separated.")
    var figures: [String] = []

    @Flag(help: "Few, short repetitions: checks that the runner works, not for numbers.")
    var quick = false

    @Option(name: .shortAndLong, help: "Directory for latest.md and latest.json.")
    var output: String = "Reports/benchmarks"

    @Option(help: "Directory of the stallreport and stall-demo binaries (default: next to stall-bench).")
    var binaries: String?

    @Option(help: "A note about the machine, copied into the results (e.g. its load).")
    var machineNote: String?

    @Option(
        help:
            "Rounds of the servers' CPU per request (figures 11a, 11e, 13a, 13f; 9 by default): more narrow their interval on a noisy machine."
    )
    var serverRounds: Int?

    @Flag(
        help:
            "Keep the other figures of the output directory's latest.json: the figures run now replace only theirs (each says when it was measured)."
    )
    var merge = false

    func validate() throws {
        _ = try FigureKind.parse(figures)
        if let serverRounds, !(1...1_000).contains(serverRounds) {
            throw ValidationError("--server-rounds must be within 1…1000")
        }
    }

    func run() throws {
        let selected = try FigureKind.parse(figures)
        let directory = URL(fileURLWithPath: output, isDirectory: true)
        let earlier = try merge ? ResultsWriter.read(directory.appendingPathComponent("latest.json")) : nil
        let context = try BenchContext(quick: quick, binaries: binaries.map { URL(fileURLWithPath: $0) })
        defer { context.cleanUp() }
        context.serverRounds = serverRounds
        let started = Date()
        let loadBefore = MachineFacts.loadAverage()
        var results: [FigureResult] = []
        for figure in selected {
            log("== figure \(figure.number): \(figure.title)")
            let measuredAt = Date()
            let began = CStallClock.now()
            let stealBefore = CPUSteal.now()
            var result: FigureResult
            do {
                result = try figure.run(context)
            } catch {
                result = FigureResult(figure: figure, rows: [], notes: ["failed: \(error)"])
                log("figure \(figure.number) failed: \(error)")
            }
            result.seconds = Double(CStallClock.now() - began) / 1e9
            result.measuredAt = measuredAt
            if let before = stealBefore { result.cpuSteal = CPUSteal.now()?.share(since: before) }
            for row in result.rows { log("   \(row.figure)  \(row.value)  goal \(row.goal)  \(row.verdict.rawValue)") }
            results.append(result)
        }
        var run = BenchRun(
            startedAt: started, seconds: Date().timeIntervalSince(started), quick: quick,
            machine: MachineFacts.describe(
                loadBefore: loadBefore, loadAfter: MachineFacts.loadAverage(), note: machineNote),
            figures: results)
        if let earlier { run = earlier.replacingFigures(with: run) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try ResultsWriter.json(run).write(to: directory.appendingPathComponent("latest.json"), options: .atomic)
        try Data(ResultsWriter.markdown(run).utf8).write(
            to: directory.appendingPathComponent("latest.md"), options: .atomic)
        log("wrote \(directory.path)/latest.md and latest.json (\(Int(run.seconds)) s)")
        if results.contains(where: { $0.notes.contains { $0.hasPrefix("failed:") } }) { throw ExitCode(3) }
    }
}

/// Progress on stderr, so stdout stays clean.
func log(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
