import Foundation
import MetricsTestKit
import StallReportKit
import StallReportModel
import Testing
import ToolSupport

@testable import StallMonitor

/// A monitor with `blockingCalls` set, on the real concurrency pool: its blocking calls are
/// written as `blocking-*.json` reports aggregated by call site, timed as the caller's own clock
/// says, and counted in the metrics timer; awaiting calls give none.
@Suite("Blocking-call reports", .serialized, .enabled(if: BlockingVisibility.executableCallsSeen))
struct BlockingCallReportTests {
    @inline(never) static func blockInPoolForReportTest(milliseconds: Int) -> CallerClock {
        BlockingGroundTruthTests.timedUsleep(milliseconds: milliseconds)
    }

    /// The blocking-calls reports in `directory`, decoded.
    static func blockingReports(in directory: ReportDirectory) throws -> [BlockingCallsReport] {
        try directory.entries().filter(BlockingCallsReport.isFileName).map { name in
            try ReportCoding.makeDecoder().decode(
                BlockingCallsReport.self, from: Data(contentsOf: directory.url.appendingPathComponent(name)))
        }
    }

    @Test(
        "pool tasks that block 20 ms four times: one call site, four durations within the request and the caller's clock, one timer value each; awaiting gives none"
    )
    func poolCallsReported() async throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        let metrics = TestMetrics()
        var configuration = directory.configuration()
        configuration.metrics = .init(factory: metrics)
        configuration.blockingCalls = .init(threshold: .milliseconds(5), reportInterval: .seconds(1))
        let monitor = try StallMonitor.start(configuration, loops: [.concurrencyPool], pollInterval: .milliseconds(5))
        var measured: [CallerClock] = []
        for _ in 0..<4 {
            measured.append(await Task.detached { Self.blockInPoolForReportTest(milliseconds: 20) }.value)
            try await Task.sleep(for: .milliseconds(20))
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { continuation.resume() }
            }
        }
        await monitor.stop()

        let reports = try Self.blockingReports(in: directory)
        try #require(!reports.isEmpty, "no blocking-calls report in \(directory.entries())")
        let sites = reports.flatMap(\.callSites).filter { site in
            site.stack.contains { $0.symbol?.contains("blockInPoolForReportTest") == true }
        }
        try #require(Set(sites.map(\.fingerprint)).count == 1, "\(sites)")
        #expect(sites.allSatisfy { $0.call == "usleep" && $0.loopKind == "concurrencyPool" })
        #expect(sites.allSatisfy { $0.callSite?.contains("timedUsleep") == true }, "\(sites.map(\.callSite))")
        #expect(
            sites.allSatisfy { $0.asyncCallers?.last?.symbol?.contains("completeTask") == true },
            "each call site's async callers end at its task's root: \(sites.map(\.asyncCallers))")
        #expect(sites.allSatisfy { $0.asyncCallersReachRoot == nil }, "a chain that reaches its root is not flagged")
        let durations = sites.flatMap(\.durationsMs)
        try #require(durations.count == measured.count, "\(durations) for \(measured)")
        #expect(sites.map(\.count).reduce(0, +) == measured.count)
        for (recorded, ownClock) in zip(durations, measured) {
            #expect(ownClock.admits(recorded, sleeping: 20), "recorded \(recorded) ms, the caller's clock \(ownClock)")
        }
        for report in reports {
            #expect(report.kind == "blockingCalls" && report.thresholdMs == 5 && report.process.pid == Int(getpid()))
            #expect(report.callSites.allSatisfy { $0.totalMs >= $0.maxMs && $0.maxMs >= 5 })
        }
        let timed = metrics.timers(label: "stallmonitor.blocking.duration")
            .filter {
                $0.dimensions.contains { $0 == ("loop.kind", "concurrencyPool") }
                    && $0.dimensions.contains { $0 == ("call", "usleep") }
            }
        #expect(timed.flatMap(\.values).filter { $0 >= 19_000_000 }.count == measured.count, "\(timed.map(\.values))")
    }

    @Test(
        "a call under an async chain deeper than the reader reads: its call site keeps the innermost callers, says the outer ones are missing, and show says so"
    )
    func cutChainReported() async throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        var configuration = directory.configuration()
        configuration.blockingCalls = .init(threshold: .milliseconds(1), reportInterval: .seconds(1))
        let monitor = try StallMonitor.start(configuration, loops: [.concurrencyPool], pollInterval: .milliseconds(5))
        _ = await Task.detached { await BlockingGroundTruthTests.deepAwaitingForBlockingTest(depth: 16) }.value
        await monitor.stop()

        let sites = try Self.blockingReports(in: directory).flatMap(\.callSites).filter {
            $0.callSite?.contains("timedUsleep") == true
        }
        try #require(sites.count == 1, "\(sites)")
        let callers = sites[0].asyncCallers?.compactMap(\.symbol) ?? []
        #expect(
            callers.count >= 2 && callers.prefix(2).allSatisfy { $0.contains("deepAwaitingForBlockingTest") },
            "\(callers)")
        #expect(sites[0].asyncCallersReachRoot == false, "\(sites[0])")
        let report = try #require(try Self.blockingReports(in: directory).first { $0.callSites.contains(sites[0]) })
        let shown = BlockingCallsShowRenderer().render(report, path: "blocking.json")
        #expect(shown.contains("awaited by") && shown.contains("… (outer callers not read)"), "\(shown)")
        // The callers are numbered from 0, as `show` numbers a stall's, and their addresses align.
        let lines = shown.split(separator: "\n").map(String.init)
        let awaited = try #require(lines.firstIndex { $0.hasPrefix("    awaited by") })
        let callerLines = lines[(awaited + 1)...].prefix { !$0.hasPrefix("    …") }
        #expect(callerLines.first?.hasPrefix("    0 ") == true, "\(shown)")
        let columns = Set(callerLines.compactMap { $0.range(of: "  0x")?.lowerBound.utf16Offset(in: $0) })
        #expect(callerLines.count == callers.count && columns.count == 1, "\(shown)")
    }

    @Test("a call site beyond maxCallSitesPerReport is counted as omitted; calls below the threshold are not recorded")
    func boundedReport() async throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        var configuration = directory.configuration()
        configuration.blockingCalls = .init(
            threshold: .milliseconds(5), reportInterval: .seconds(60), maxCallSitesPerReport: 1)
        let monitor = try StallMonitor.start(configuration, loops: [.concurrencyPool], pollInterval: .milliseconds(5))
        _ = await Task.detached { Self.blockInPoolForReportTest(milliseconds: 30) }.value
        _ = await Task.detached { BlockingGroundTruthTests.timedUsleep(milliseconds: 10) }.value
        _ = await Task.detached { BlockingGroundTruthTests.timedUsleep(milliseconds: 1) }.value
        await monitor.stop()
        let reports = try Self.blockingReports(in: directory)
        try #require(reports.count == 1, "\(directory.entries())")
        #expect(reports[0].callSites.count == 1 && reports[0].omittedCallSites == 1, "\(reports[0].callSites)")
        #expect(
            reports[0].callSites.first?.stack.contains { $0.symbol?.contains("blockInPoolForReportTest") == true }
                == true)
        #expect(reports[0].callSites.allSatisfy { $0.durationsMs.allSatisfy { $0 >= 5 } })
    }

    @Test("an invalid blockingCalls setting is refused at start")
    func invalidOptions() {
        let directory = ReportDirectory()
        defer { directory.remove() }
        var configuration = directory.configuration()
        configuration.blockingCalls = .init(reportInterval: .milliseconds(10))
        #expect(throws: StallMonitorError.self) { try StallMonitor.start(configuration, loops: [.concurrencyPool]) }
    }
}

/// What a monitor with `blockingCalls` says at start about what it cannot see, in whatever build
/// this is: nothing in a plain build, the functions the executable defines itself under
/// AddressSanitizer, that nothing is watched under ThreadSanitizer; stalls are watched in each.
@Suite("Blocking calls: what is not seen", .serialized)
struct BlockingCallVisibilityTests {
    @Test("start says which blocking calls are not seen, and only those")
    func startSaysWhatIsNotSeen() async throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        var configuration = directory.configuration()
        configuration.blockingCalls = .init()
        let monitor = try StallMonitor.start(configuration, loops: [.concurrencyPool], pollInterval: .milliseconds(5))
        let said = monitor.statistics.errors["blockingCallsUnwatched"] ?? 0
        let notSeen = monitor.blockingCallsNotSeen
        await monitor.stop()
        if !BlockingVisibility.detectorStarts {
            #expect(said == 1 && notSeen == nil, "ThreadSanitizer: nothing is watched, and start says so")
        } else {
            let defined = ["usleep", "read", "pthread_mutex_lock", "nanosleep"].filter(
                BlockingVisibility.executableDefines)
            #expect(said == (defined.isEmpty ? 0 : 1), "the executable defines \(defined)")
            #expect(notSeen != nil && notSeen?.contains("read") == false, "\(notSeen ?? [])")
        }
    }
}
