import ArgumentParser
import Foundation

/// `stall-bench instruction-counts`: the instructions StallMonitor adds on its hot paths,
/// counted by callgrind (the same on every run of the same build, where wall-clock ratios on a
/// shared machine swing by more than the regressions worth catching), and compared with a
/// committed baseline: CI fails when one grows more than the tolerance over it.
struct InstructionCounts: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "instruction-counts",
        abstract:
            "Count the instructions StallMonitor adds on its hot paths (callgrind) and compare them with a baseline.",
        discussion: """
            Each count is (instructions with StallMonitor − instructions of the baseline) ÷ operations, \
            collected only inside the workload's own function (for the pool's enqueue hook: inside the \
            hook's own work, which has no baseline). Exit 0: every count within the tolerance \
            of the baseline; 1: one grew more; 2: the baseline file cannot be read; 3: a count could not \
            be measured (valgrind missing, a workload failed). --update writes the counts to the baseline \
            file instead (commit it with the reason).
            """)

    @Option(help: "The baseline file (JSON) to compare with, or to write with --update.")
    var baseline = "Reports/benchmarks/instruction-counts.json"

    @Flag(help: "Write the counts measured now to the baseline file instead of comparing.")
    var update = false

    @Option(help: "Largest growth allowed over the baseline, as a fraction (default: the baseline file's, else 0.10).")
    var tolerance: Double?

    @Option(parsing: .upToNextOption, help: "Measure only these counts (by name).")
    var only: [String] = []

    /// One count: a workload run with and without StallMonitor.
    struct Measure {
        var name: String
        var label: String
        /// Where callgrind collects (`--toggle-collect` patterns).
        var functions: [String]
        var arguments: [String]
        var with: [String]
        /// The baseline's arguments; nil when the functions run only with StallMonitor.
        var without: [String]?
        var operations: Int
        /// Variables set for the workload (`NAME=value`).
        var environment: [String] = []
        /// Why this count cannot be measured on this machine (nil: it can).
        var unavailable: @Sendable () -> String? = { nil }
    }

    /// A read that does not block, in a Swift task (so timed), through the blocking-call wrapper.
    static func timedInTask(
        _ name: String, _ label: String, environment: [String] = [],
        unavailable: @escaping @Sendable () -> String? = { nil }
    ) -> Measure {
        Measure(
            name: name, label: label, functions: ["*blockingCostLoop*"],
            arguments: ["blocking-call-loop", "--in-task", "--calls", "5000"],
            with: ["--detector"], without: ["--no-detector"], operations: 5000, environment: environment,
            unavailable: unavailable)
    }

    /// Why the blocking-call wrappers cannot time with the CPU's counter here: the kernel does not
    /// keep its own time with it (the shim's own rule, blocking_clock.c).
    static func counterClockUnavailable() -> String? {
        #if arch(x86_64)
        let source = try? String(
            contentsOfFile: "/sys/devices/system/clocksource/clocksource0/current_clocksource", encoding: .utf8)
        return source == "tsc\n"
            ? nil
            : "the kernel's clocksource is \(source.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? "unknown"), not tsc"
        #else
        return "not an x86-64 machine"
        #endif
    }

    static let measures: [Measure] = [
        Measure(
            name: "runLoopPass", label: "a main RunLoop pass: the monitor's observers vs bare observers",
            functions: ["*measuredRunLoopPasses*"],
            arguments: ["instruction-loop", "--workload", "runloop-pass", "--count", "2000"],
            with: ["--monitored"], without: ["--no-monitored"], operations: 2000),
        Measure(
            name: "epollWaitReturn",
            label: "an epoll_wait return on a watched loop's thread: the shim's vs the C library's",
            functions: ["*measuredEpollWaits*"],
            arguments: ["instruction-loop", "--workload", "epoll-wait", "--count", "5000"],
            with: ["--monitored"], without: ["--no-monitored"], operations: 5000),
        Measure(
            name: "poolJobEnqueue", label: "a job enqueued on the watched concurrency pool (the enqueue hook)",
            functions: ["CStallMonitor_pool_note_job", "CStallMonitor_wakeup_flags_note_slots"],
            arguments: ["instruction-loop", "--workload", "pool-job", "--count", "2000"],
            with: ["--monitored"], without: nil, operations: 2100),  // 100 warm-up jobs, 2000 counted
        Measure(
            name: "blockingWrapperCall", label: "a read that does not block, through the blocking-call wrapper",
            functions: ["*blockingCostLoop*"],
            arguments: ["blocking-call-loop", "--calls", "5000"],
            with: ["--detector"], without: ["--no-detector"], operations: 5000),
        timedInTask(
            "blockingWrapperCallInTask",
            "a read that does not block in a Swift task (timed with CLOCK_MONOTONIC), through the wrapper",
            environment: ["STALLMONITOR_BLOCKING_CLOCK=monotonic"]),
        timedInTask(
            "blockingWrapperCallInTaskCounter",
            "the same, timed with the CPU's counter (where the kernel keeps time with it)",
            unavailable: counterClockUnavailable),
    ]

    func run() throws {
        let selected = only.isEmpty ? Self.measures : Self.measures.filter { only.contains($0.name) }
        if let unknown = only.first(where: { name in !Self.measures.contains { $0.name == name } }) {
            throw ValidationError(
                "no count named \(unknown); the counts: \(Self.measures.map(\.name).joined(separator: ", "))")
        }
        // Read the baseline first: a bad file is said before minutes of measuring.
        let old: InstructionBaseline?
        do {
            old = update ? nil : try InstructionBaseline.read(baseline)
        } catch {
            printError("stall-bench instruction-counts: \(baseline): \(error)")
            throw ExitCode(2)
        }
        let context = try BenchContext(quick: true, binaries: nil)
        defer { try? FileManager.default.removeItem(at: context.scratch) }
        var counts: [String: Double] = [:]
        var unmeasured: [String: String] = [:]
        do {
            let callgrind = try Callgrind(executable: context.executable, scratch: context.scratch)
            for measure in selected {
                if let reason = measure.unavailable() {
                    unmeasured[measure.name] = reason
                    continue
                }
                let with = try callgrind.instructions(
                    in: measure.functions, measure.arguments + measure.with, environment: measure.environment)
                let without =
                    try measure.without.map {
                        try callgrind.instructions(
                            in: measure.functions, measure.arguments + $0, environment: measure.environment)
                    } ?? 0
                counts[measure.name] = ((with - without) / Double(measure.operations) * 10).rounded() / 10
            }
        } catch {
            printError("stall-bench instruction-counts: cannot measure: \(error)")
            throw ExitCode(3)
        }
        if update {
            let previous = try? InstructionBaseline.read(baseline)
            try InstructionBaseline(counts: counts, tolerance: tolerance ?? previous?.tolerance ?? 0.10)
                .write(baseline, merging: only.isEmpty && unmeasured.isEmpty ? nil : previous)
            print("wrote \(baseline)")
            for measure in selected {
                let count =
                    unmeasured[measure.name].map { "kept (not measured: \($0))" }
                    ?? Format.fixed(counts[measure.name] ?? 0, 1)
                print("  \(measure.name)\t\(count)\t\(measure.label)")
            }
            return
        }
        guard let old else { return }
        let tolerance = self.tolerance ?? old.tolerance
        var grew: [String] = []
        print(
            "Instructions StallMonitor adds per operation (callgrind; baseline \(baseline); tolerance +\(Format.fixed(tolerance * 100, 0)) %)"
        )
        print("count\tbaseline\tnow\tchange\twhat")
        for measure in selected {
            if let reason = unmeasured[measure.name] {
                print(
                    "\(measure.name)\t\(old.counts[measure.name].map { Format.fixed($0, 1) } ?? "—")\t—\tnot measured: \(reason)\t\(measure.label)"
                )
                continue
            }
            let now = counts[measure.name] ?? 0
            guard let before = old.counts[measure.name] else {
                print("\(measure.name)\t—\t\(Format.fixed(now, 1))\tnew\t\(measure.label)")
                continue
            }
            // Half an instruction of slack: a count near zero must not fail on rounding.
            let limit = before * (1 + tolerance) + 0.5
            let change = before == 0 ? "" : String(format: "%+.1f %%", (now - before) / before * 100)
            let verdict = now > limit ? "  GREW (limit \(Format.fixed(limit, 1)))" : ""
            print(
                "\(measure.name)\t\(Format.fixed(before, 1))\t\(Format.fixed(now, 1))\t\(change)\t\(measure.label)\(verdict)"
            )
            if now > limit { grew.append(measure.name) }
        }
        guard grew.isEmpty else {
            printError(
                """
                stall-bench instruction-counts: \(grew.joined(separator: ", ")) grew more than \(Format.fixed(tolerance * 100, 0)) % over \(baseline). \
                If the growth is intended, run Scripts/instruction-check --update and commit the file with the reason.
                """)
            throw ExitCode(1)
        }
    }

    private func printError(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}

/// The committed counts `stall-bench instruction-counts` compares with.
struct InstructionBaseline: Codable {
    var about =
        "Instructions StallMonitor adds per operation on its hot paths, counted by callgrind in a debug build (stall-bench instruction-counts; Scripts/instruction-check). CI fails when one grows more than the tolerance over this file. Update it with Scripts/instruction-check --update, in a commit that says why."
    var build = "debug"
    var counts: [String: Double]
    var tolerance: Double

    init(counts: [String: Double], tolerance: Double) {
        self.counts = counts
        self.tolerance = tolerance
    }

    /// Reads `path`; throws a message that says what is wrong with it.
    static func read(_ path: String) throws -> InstructionBaseline {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw BenchError("cannot be read (missing, or not a readable file)")
        }
        do {
            return try JSONDecoder().decode(InstructionBaseline.self, from: data)
        } catch let error as DecodingError {
            throw BenchError("not a baseline file: \(error)")
        }
    }

    /// Writes the file (pretty, sorted keys); counts not measured now are kept from `merging`.
    func write(_ path: String, merging previous: InstructionBaseline?) throws {
        var merged = self
        if let previous { merged.counts = previous.counts.merging(counts) { $1 } }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try (encoder.encode(merged) + Data("\n".utf8)).write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}
