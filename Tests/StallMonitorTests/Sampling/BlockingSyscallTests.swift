import Foundation
import StallMonitor
import StallReportKit
import Testing

/// Threads asleep in the kernel get their full stacks without being signalled, and no call of
/// theirs is ever cut short.
@Suite("Threads blocked in syscalls", .serialized)
struct BlockingSyscallTests {
    /// Calls of each kind; 9 kinds × 23 = 207 blocking stalls.
    static let callsPerKind = 23
    static let callMs = 100

    @Test(
        "207 blocking stalls in 9 kinds of syscall: every call returns exactly, every report has the caller's full stack"
    )
    func everyBlockingCallIsUnwoundAndNeverCutShort() throws {
        try withMonitoredLoop(
            "blocking-calls",
            configure: { configuration in
                configuration.threshold = .milliseconds(50)
                configuration.maxReportsPerFingerprint = 1_000
            }
        ) { directory, loop, monitor in
            var outcomes: [(kind: BlockingCalls.Kind, outcome: BlockingCalls.Outcome)] = []
            for kind in BlockingCalls.all {
                for _ in 0..<Self.callsPerKind {
                    let call = kind.call
                    let outcome = try loop.run { call(Self.callMs) }
                    outcomes.append((kind, outcome))
                    try loop.waitUntilSleeping()
                }
            }
            let stalls = BlockingCalls.all.count * Self.callsPerKind
            // Every stall is reported, except one the monitor rightly cannot tell from a stopped
            // process (its watchdog kept off the CPU > 250 ms: a sanitizer runtime, a loaded machine;
            // counted, never invented).
            let accounted = waitUntil(timeout: .seconds(60)) {
                let statistics = monitor.statistics
                return statistics.stallsDetected + statistics.discardedProcessStopped >= stalls
                    && statistics.reportsWritten >= statistics.stallsDetected
            }
            monitor.flush(timeout: .seconds(5))
            let statistics = monitor.statistics
            #expect(accounted, "\(statistics)")

            // Exactly what each call must return: nothing was cut short.
            for (kind, outcome) in outcomes {
                #expect(
                    outcome.value == kind.expectedValue && outcome.error == kind.expectedError,
                    "\(kind.function): \(outcome)")
                #expect(
                    outcome.elapsedMs >= Double(Self.callMs) - kind.earlyByMs, "\(kind.function) woke early: \(outcome)"
                )
            }

            let reports = try directory.reports()
            #expect(reports.count == statistics.stallsDetected, "\(reports.count) reports: \(statistics)")
            #expect(statistics.stallsDetected + statistics.discardedProcessStopped == stalls, "\(statistics)")
            var reportsPerKind: [String: Int] = [:]
            var fingerprints: [String: Set<String>] = [:]
            for report in reports {
                // Samples of the sleeping thread: unwound without a signal, naming one call site and
                // the syscall it sleeps in, whole down to the thread's entry unless marked truncated.
                let asleep = report.samples.filter { $0.kind == .stack && $0.interrupted == false }
                #expect(report.samples.allSatisfy { $0.interrupted != true || $0.syscall == nil })
                guard let first = asleep.first else { continue }
                let kind = try #require(
                    BlockingCalls.all.first { kind in report.symbols(of: first).contains { $0.contains(kind.function) }
                    },
                    "a sleeping sample names no blocking call: \(report.symbols(of: first))")
                reportsPerKind[kind.function, default: 0] += 1
                for sample in asleep {
                    let symbols = report.symbols(of: sample)
                    #expect(sample.unwinder == "libdw")
                    #expect(
                        kind.syscalls.contains(sample.syscall ?? "-"),
                        "\(kind.function) slept in \(sample.syscall ?? "-")")
                    #expect(symbols.contains { $0.contains(kind.function) }, "\(kind.function): \(symbols)")
                    if sample.truncated != true {
                        #expect(
                            symbols.suffix(3).contains { $0.contains("clone") || $0.contains("start_thread") },
                            "\(symbols)")
                    }
                }
                if report.representativeSymbols.contains(where: { $0.contains(kind.function) }) {
                    fingerprints[kind.function, default: []].insert(report.fingerprint)
                }
            }
            #expect(Set(reportsPerKind.keys) == Set(BlockingCalls.all.map(\.function)), "\(reportsPerKind)")
            // Sleeps in two functions are two groups; every stall of one call site is one group.
            for (function, prints) in fingerprints {
                #expect(prints.count == 1, "\(function) has fingerprints \(prints)")
            }
            let distinct = Set(fingerprints.values.compactMap(\.first))
            #expect(distinct.count == BlockingCalls.all.count, "\(fingerprints)")
        }
    }
}
