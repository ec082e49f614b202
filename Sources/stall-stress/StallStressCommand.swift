import ArgumentParser
import Foundation
import Logging
import StallMonitor

/// Thousands of stalls across several monitored threads, then checks that every report is there
/// and valid, the counts are exact, and descriptors and threads are back after stop().
@main
struct StallStressCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stall-stress",
        abstract: "Stress the stall monitor: many stalls on several monitored run loops at once.",
        discussion: """
            Rounds: a baseline without monitors (warms up Foundation and Dispatch and gives the \
            thread and descriptor counts to come back to), the main monitored round, and a small \
            second monitored round (no growth from round to round). Exit status 1 when a check fails.
            """)

    @Option(help: "Monitored threads, each with its own RunLoop and monitor.")
    var threads = 4
    @Option(help: "Stalls in the main round, split over the threads.")
    var stalls = 2_000
    @Option(name: .customLong("threshold-ms"), help: "Stall threshold.")
    var thresholdMs = 20
    @Option(name: .customLong("interval-ms"), help: "Sampling interval.")
    var intervalMs = 2
    @Option(name: .customLong("stall-ms"), help: "Stall lengths, MIN-MAX (all clearly above the threshold).")
    var stallMs = "25-40"
    @Option(name: .customLong("gap-ms"), help: "Idle gaps between stalls, MIN-MAX.")
    var gapMs = "5-15"
    @Option(help: "Report directory (one subdirectory per round; must not exist).")
    var output: String
    @Option(help: "Write the results as JSON here.")
    var summary: String?
    @Option(name: .customLong("settle-seconds"), help: "How long to wait for threads to exit after a round.")
    var settleSeconds = 20
    @Option(help: "Seed of the stall plan.")
    var seed: UInt64 = 5

    func validate() throws {
        guard threads >= 1, stalls >= threads else { throw ValidationError("need at least one stall per thread") }
        guard let stall = Self.range(stallMs), let gap = Self.range(gapMs) else {
            throw ValidationError("ranges are MIN-MAX")
        }
        guard stall.lowerBound > thresholdMs else { throw ValidationError("every stall must be above the threshold") }
        guard gap.lowerBound >= 2 else { throw ValidationError("gaps must be at least 2 ms so the loop really sleeps") }
    }

    func run() throws {
        let stallRange = Self.range(stallMs)!
        let gapRange = Self.range(gapMs)!
        let root = URL(fileURLWithPath: output, isDirectory: true)
        let start = (
            fds: ProcessCounts.fileDescriptors(), threads: ProcessCounts.threads(), names: ProcessCounts.threadNames()
        )
        let settle = Duration.seconds(settleSeconds)

        func plans(_ total: Int) -> [StressPlan] {
            StressPlan.split(total: total, workers: threads, stallMs: stallRange, gapMs: gapRange, seed: seed)
        }
        func configuration(_ name: String) -> StallMonitor.Configuration {
            var configuration = StallMonitor.Configuration(
                threshold: .milliseconds(thresholdMs), reportDirectory: root.appendingPathComponent(name),
                samplingInterval: .milliseconds(intervalMs))
            configuration.maxReportsPerFingerprint = 1_000_000
            configuration.maxReportFiles = 1_000_000
            configuration.maxReportBytes = Int.max / 2
            configuration.logger.logLevel = .notice  // thousands of reports: the checks read them, no log line each
            return configuration
        }

        say(
            "stall-stress: \(threads) threads, \(stalls) stalls of \(stallMs) ms with \(gapMs) ms gaps, threshold \(thresholdMs) ms, sampling every \(intervalMs) ms"
        )
        let baseline = StressRound(label: "baseline (no monitors)", plans: plans(threads * 10), configuration: nil)
            .run(threadTarget: start.threads, settle: settle)
        say(
            "  baseline: \(baseline.totalProduced) stalls in \(format(baseline.seconds)) s; threads \(start.threads) -> \(baseline.threadsAfter), fds \(start.fds) -> \(baseline.fileDescriptorsAfter)"
        )
        let namesAfterBaseline = ProcessCounts.threadNames()
        let fdTargetsAfterBaseline = ProcessCounts.fileDescriptorTargets()

        let main = StressRound(label: "main", plans: plans(stalls), configuration: configuration("main"))
            .run(threadTarget: baseline.threadsAfter, settle: settle)
        var mainResult = main
        mainResult.extraThreadNames = Self.difference(ProcessCounts.threadNames(), namesAfterBaseline)
        let fdTargetsAfterMain = ProcessCounts.fileDescriptorTargets()
        var childTargets = ProcessCounts.childDescriptorTargets()
        let mainCheck = ReportCheck(directory: root.appendingPathComponent("main"), thresholdMs: Double(thresholdMs))
            .run()
        say(
            "  main: \(main.totalProduced) stalls (\(main.totalExpectedSpans) separate spans: the loop slept before them) in \(format(main.seconds)) s (\(main.ambiguousWaits) waits of 0.1-1 ms, near the 0.2 ms re-entry grace); detected \(main.stallsDetected), reports \(mainCheck.reportFiles) (\(mainCheck.bytes / 1024) KiB), samples \(main.samplesTaken) taken / \(main.samplesTimedOut) timed out; threads -> \(main.threadsAfter) after \(format(main.threadsSettleSeconds)) s, fds -> \(main.fileDescriptorsAfter)"
        )

        let second = StressRound(
            label: "second", plans: plans(max(threads, stalls / 10)), configuration: configuration("second")
        )
        .run(threadTarget: main.threadsAfter, settle: settle)
        let secondCheck = ReportCheck(
            directory: root.appendingPathComponent("second"), thresholdMs: Double(thresholdMs)
        ).run()
        say(
            "  second: \(second.totalProduced) stalls; detected \(second.stallsDetected), reports \(secondCheck.reportFiles); threads -> \(second.threadsAfter), fds -> \(second.fileDescriptorsAfter)"
        )

        let extraFDs = Self.newTargets(fdTargetsAfterMain, since: fdTargetsAfterBaseline)
        childTargets.merge(ProcessCounts.childDescriptorTargets()) { first, _ in first }
        var failures: [String] = []
        for (round, check) in [(main, mainCheck), (second, secondCheck)] {
            failures += Self.checks(round: round, check: check, monitors: threads)
        }
        if baseline.totalProduced != baseline.planned {
            failures.append("baseline: \(baseline.totalProduced) of \(baseline.planned) stalls")
        }
        let sharedWithChildren = extraFDs.filter { childTargets[$0] != nil }
        let leftOpen = Self.descriptorsLeftOpen(extraFDs.filter { childTargets[$0] == nil })
        if !leftOpen.isEmpty {
            failures.append(
                "descriptors opened by the monitors and still open after stop(): \(leftOpen.joined(separator: ", "))")
        }
        if second.fileDescriptorsAfter != main.fileDescriptorsAfter {
            failures.append(
                "file descriptors grew from round to round: \(main.fileDescriptorsAfter) -> \(second.fileDescriptorsAfter)"
            )
        }
        if main.threadsAfter > baseline.threadsAfter || second.threadsAfter > baseline.threadsAfter {
            failures.append(
                "threads not back to the baseline count \(baseline.threadsAfter): \(main.threadsAfter), \(second.threadsAfter) (extra: \(mainResult.extraThreadNames))"
            )
        }
        let memory = Self.memory()
        let results = StressResults(
            threads: threads, stalls: stalls, thresholdMs: thresholdMs, intervalMs: intervalMs, stallMs: stallMs,
            gapMs: gapMs,
            start: .init(fileDescriptors: start.fds, threads: start.threads), baseline: baseline, main: mainResult,
            mainReports: mainCheck, second: second, secondReports: secondCheck,
            fileDescriptorsLeftAfterStop: extraFDs, fileDescriptorsSharedWithChildren: sharedWithChildren,
            peakRSSKiB: memory.peak, rssKiB: memory.current, failures: failures)
        if let summary {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.nonConformingFloatEncodingStrategy = .convertToString(
                positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
            try encoder.encode(results).write(to: URL(fileURLWithPath: summary))
        }
        say(
            "  descriptors opened since the baseline and still open after stop(): \(extraFDs.isEmpty ? "none" : extraFDs.joined(separator: ", "))"
        )
        if !sharedWithChildren.isEmpty {
            let children = Set(sharedWithChildren.compactMap { childTargets[$0] }).sorted()
            say(
                "    of which shared with child processes (\(children.joined(separator: ", ")), which the monitor never starts: a sanitizer's symbolizer): \(sharedWithChildren.joined(separator: ", "))"
            )
        }
        say("  peak RSS \(memory.peak) KiB, RSS now \(memory.current) KiB")
        if failures.isEmpty {
            say("stall-stress: all checks passed")
        } else {
            failures.forEach { say("FAIL: \($0)") }
            throw ExitCode(1)
        }
    }

    /// The checks of one monitored round.
    static func checks(round: StressRound.Result, check: ReportCheck.Result, monitors: Int) -> [String] {
        var failures: [String] = []
        func expect(_ condition: Bool, _ message: @autoclosure () -> String) {
            if !condition { failures.append("\(round.label): \(message())") }
        }
        expect(round.joinedAll && round.startErrors.isEmpty, "workers did not all finish: \(round.startErrors)")
        expect(round.flushedAll, "a monitor's writer did not flush in time")
        expect(round.totalProduced == round.planned, "produced \(round.totalProduced) of \(round.planned) stalls")
        expect(
            round.stallsDetected == round.totalExpectedSpans,
            "detected \(round.stallsDetected), expected spans \(round.totalExpectedSpans)")
        expect(
            round.reportsWritten == round.totalExpectedSpans,
            "written \(round.reportsWritten), expected spans \(round.totalExpectedSpans)")
        expect(
            check.reportFiles == round.totalExpectedSpans,
            "\(check.reportFiles) report files, expected spans \(round.totalExpectedSpans)")
        expect(check.decoded == check.reportFiles, "undecodable: \(check.decodeFailures.prefix(5))")
        expect(check.notEnded == 0, "\(check.notEnded) reports not ended")
        expect(check.belowThreshold == 0, "\(check.belowThreshold) reports below the threshold")
        expect(check.rateLimited == 0 && round.reportsRateLimited == 0, "rate-limited reports")
        expect(round.reportsDeletedForQuota == 0, "reports deleted for quota")
        expect(check.samplingUnaccounted == 0, "\(check.samplingUnaccounted) reports with unaccounted samples")
        expect(
            check.reportsByThread == round.expectedSpans,
            "per thread: reports \(check.reportsByThread), expected \(round.expectedSpans)")
        expect(check.temporaryFiles == 0, "\(check.temporaryFiles) temporary files left")
        expect(
            check.sessionRecords == monitors && check.sessionsCleanlyStopped == monitors,
            "session records \(check.sessionRecords), cleanly stopped \(check.sessionsCleanlyStopped), monitors \(monitors)"
        )
        expect(check.sessionStalls == round.totalExpectedSpans, "session records count \(check.sessionStalls) stalls")
        expect(round.discarded == 0, "\(round.discarded) stalls discarded (process stopped, debugger, expected work)")
        expect(round.errors.isEmpty, "errors \(round.errors)")
        return failures
    }

    /// What of `targets` (descriptors opened since the baseline, none shared with a child
    /// process) should not be open after every monitor stopped. libunwind opens one pipe (both
    /// ends) the first time it unwinds, to check addresses with write(2), and keeps it for the
    /// life of the process; nothing else may stay.
    static func descriptorsLeftOpen(_ targets: [String]) -> [String] {
        guard
            let pipe = targets.first(where: { target in
                target.hasPrefix("pipe:") && targets.filter { $0 == target }.count == 2
            })
        else { return targets }
        return targets.filter { $0 != pipe }
    }

    static func range(_ text: String) -> ClosedRange<Int>? {
        let parts = text.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 2, parts[0] <= parts[1], parts[0] > 0 else { return nil }
        return parts[0]...parts[1]
    }

    static func difference(_ now: [String: Int], _ before: [String: Int]) -> [String: Int] {
        now.compactMapValues { $0 }.reduce(into: [:]) { result, entry in
            let extra = entry.value - (before[entry.key] ?? 0)
            if extra > 0 { result[entry.key] = extra }
        }
    }

    static func newTargets(_ now: [String: String], since before: [String: String]) -> [String] {
        let old = Set(before.values)
        return now.values.filter { !old.contains($0) }.sorted()
    }

    /// VmHWM and VmRSS from /proc/self/status, in KiB.
    static func memory() -> (peak: Int, current: Int) {
        let text = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        func value(_ key: String) -> Int {
            text.split(separator: "\n").first { $0.hasPrefix(key) }
                .flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") } ?? 0
        }
        return (value("VmHWM:"), value("VmRSS:"))
    }
}

/// Writes a line to stdout at once (unbuffered, so progress shows in a pipe too).
private func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

private func format(_ value: Double) -> String {
    String(format: "%.1f", value)
}
