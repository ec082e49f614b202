import CoreFoundation
import CStallMonitor
import Synchronization
import Testing

@testable import StallMonitor

/// A watchdog that gets no CPU for a whole stall (an overloaded machine) never tracks the span,
/// but the tracker publishes it: the stall must still be reported, exactly timed, without samples.
@Suite("Missed stalls", .serialized)
struct MissedStallTests {
    private static let ms: UInt64 = 1_000_000

    private final class Events: @unchecked Sendable {
        let list = Mutex<[StallEvent]>([])
    }

    private func makeWatch(events: Events, threshold: UInt64 = 250 * ms) -> (SpanTracker, ThreadWatch) {
        let tracker = SpanTracker(publishAfter: threshold / 2, reentryGrace: 200_000, wakeup: WakeupSignal())
        let thread = MonitoredThread(tracker: tracker, runLoop: CFRunLoopGetCurrent())
        thread.armedTID.store(CStallMonitor_gettid(), ordering: .releasing)
        let watch = ThreadWatch(
            thread: thread,
            settings: .init(threshold: threshold, lead: threshold / 2, interval: 10 * Self.ms, sampleTimeout: 10 * Self.ms,
                            maxSamples: 200, maxFrames: 64, reentryGrace: 200_000, interruptSleepingSyscalls: false,
                            signal: 0, inProgressRefresh: 1_000 * Self.ms, reportWhileDebugged: true),
            counters: MonitorCounters(), controls: MonitorControls(),
            emit: { event in events.list.withLock { $0.append(event) } })
        return (tracker, watch)
    }

    @Test("a 400 ms span the watchdog never saw is reported with its exact duration and no samples")
    func starvedWatchdog() throws {
        let events = Events()
        let (tracker, watch) = makeWatch(events: events)
        #expect(watch.step(now: 1 * Self.ms) == nil, "nothing open yet: the watchdog would park")
        tracker.record(64, at: 1_000 * Self.ms)       // afterWaiting: span 1 opens
        tracker.record(32, at: 1_400 * Self.ms)       // beforeWaiting: suspended
        tracker.record(64, at: 2_000 * Self.ms)       // afterWaiting: span 1 ended at 1,400 ms, span 2 opens
        _ = watch.step(now: 2_001 * Self.ms)           // the watchdog finally runs
        let recorded = events.list.withLock { $0 }
        try #require(recorded.count == 1)
        guard case .ended(let stall) = recorded[0] else {
            Issue.record("expected an ended stall, got \(recorded[0])")
            return
        }
        #expect(stall.sequence == 1)
        #expect(stall.end - stall.spanStart == 400 * Self.ms)
        #expect(stall.samples.isEmpty && stall.skipped["watchdogStarved"] == 1)
        _ = watch.step(now: 2_002 * Self.ms)
        #expect(events.list.withLock { $0.count } == 1, "reported once")
    }

    @Test("a short span the watchdog never saw is not reported")
    func shortSpan() {
        let events = Events()
        let (tracker, watch) = makeWatch(events: events)
        tracker.record(64, at: 1_000 * Self.ms)
        tracker.record(32, at: 1_200 * Self.ms)       // 200 ms: published (past the lead), below the threshold
        tracker.record(64, at: 2_000 * Self.ms)
        _ = watch.step(now: 2_001 * Self.ms)
        #expect(events.list.withLock { $0.isEmpty })
    }
}
