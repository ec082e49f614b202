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

    @Test("207 blocking stalls in 9 kinds of syscall: every call returns exactly, every report has the caller's full stack")
    func everyBlockingCallIsUnwoundAndNeverCutShort() throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        let loop = try MonitoredLoopThread(name: "blocking-calls")
        defer { loop.stop() }
        var configuration = directory.configuration(threshold: .milliseconds(50))
        configuration.maxReportsPerFingerprint = 1_000
        let monitor = try loop.startMonitor(configuration)
        defer { monitor.stop() }

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
        #expect(monitor.waitForStalls(stalls, timeout: .seconds(60)), "\(monitor.statistics)")

        // Exactly what each call must return: nothing was cut short.
        for (kind, outcome) in outcomes {
            #expect(outcome.value == kind.expectedValue && outcome.error == kind.expectedError,
                    "\(kind.function): \(outcome)")
            #expect(outcome.elapsedMs >= Double(Self.callMs) - kind.earlyByMs, "\(kind.function) woke early: \(outcome)")
        }

        let reports = try directory.reports()
        #expect(reports.count == stalls, "\(reports.count) reports for \(stalls) stalls: \(monitor.statistics)")
        var fingerprints: [String: Set<String>] = [:]
        for kind in BlockingCalls.all {
            let ofKind = reports.filter { $0.representativeSymbols.contains { $0.contains(kind.function) } }
            #expect(ofKind.count == Self.callsPerKind, "\(ofKind.count) reports name \(kind.function)")
            fingerprints[kind.function] = Set(ofKind.map(\.fingerprint))
            for report in ofKind {
                // Samples while the thread slept (the span goes on a moment after the call).
                let asleep = report.samples.filter { $0.kind == .stack && $0.interrupted == false }
                #expect(!asleep.isEmpty, "\(kind.function): no sample of the sleeping thread: \(report.samples.map { ($0.offsetMs, $0.kind, $0.note ?? "") })")
                for sample in asleep {
                    let symbols = report.symbols(of: sample)
                    #expect(sample.unwinder == "libdw")
                    #expect(kind.syscalls.contains(sample.syscall ?? "-"), "\(kind.function) slept in \(sample.syscall ?? "-")")
                    #expect(symbols.contains { $0.contains(kind.function) }, "\(kind.function): \(symbols)")
                    // Whole stacks reach the thread's entry (clone3/start_thread) unless marked truncated.
                    if sample.truncated != true {
                        #expect(symbols.suffix(3).contains { $0.contains("clone") || $0.contains("start_thread") }, "\(symbols)")
                    }
                }
                #expect(report.samples.allSatisfy { $0.interrupted != true || $0.syscall == nil })
            }
        }
        // Sleeps in two functions are two groups; every stall of one call site is one group.
        for (function, prints) in fingerprints {
            #expect(prints.count == 1, "\(function) has fingerprints \(prints)")
        }
        let distinct = Set(fingerprints.values.compactMap(\.first))
        #expect(distinct.count == BlockingCalls.all.count, "\(fingerprints)")
    }
}
