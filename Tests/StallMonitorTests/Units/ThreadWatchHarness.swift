import CoreFoundation
import CStallMonitor
import Synchronization

@testable import StallMonitor

/// A ``ThreadWatch`` of the calling thread driven by hand: the test feeds the tracker observer
/// activities at chosen monotonic times and calls `step(now:)`, and reads what was emitted.
final class ThreadWatchHarness: @unchecked Sendable {
    static let ms: UInt64 = 1_000_000

    let tracker: SpanTracker
    let watch: ThreadWatch
    let counters = MonitorCounters()
    /// The simulated thread's voluntary context switches (it sleeps in every pause unless told).
    let switches = SimulatedSwitches()
    private let events = EventLog()

    private final class EventLog: @unchecked Sendable {
        let list = Mutex<[StallEvent]>([])
    }

    init(threshold: UInt64 = 250 * ThreadWatchHarness.ms) {
        let ms = Self.ms
        let switches = self.switches
        tracker = SpanTracker(publishAfter: threshold / 2, reentryGrace: 200_000, wakeup: WakeupSignal(),
                              voluntarySwitches: { switches.next() })
        let thread = MonitoredThread(tracker: tracker, runLoop: CFRunLoopGetCurrent())
        thread.armedTID.store(CStallMonitor_gettid(), ordering: .releasing)
        let events = self.events
        watch = ThreadWatch(
            thread: thread,
            settings: .init(threshold: threshold, lead: threshold / 2, interval: 10 * ms, sampleTimeout: 10 * ms,
                            maxSamples: 200, maxFrames: 64, reentryGrace: 200_000, unwinding: .snapshot, stackCopyBytes: 65_536,
                            signal: 0, inProgressRefresh: 1_000 * ms, reportWhileDebugged: true),
            counters: counters, controls: MonitorControls(),
            emit: { event in events.list.withLock { $0.append(event) } })
        watch.threadVoluntarySwitches = { switches.next() }
    }

    /// Everything emitted so far.
    var emitted: [StallEvent] { events.list.withLock { $0 } }

    /// The recordings of the `ended` events emitted so far.
    var endedStalls: [StallRecording] {
        emitted.compactMap { if case .ended(let recording) = $0 { recording } else { nil } }
    }
}
