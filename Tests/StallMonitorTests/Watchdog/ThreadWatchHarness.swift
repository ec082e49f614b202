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
        let armingReports = Mutex<[String]>([])
    }

    /// `arming`: when given, the thread arms itself with these steps (one may fail) instead of
    /// being marked armed directly; what it reports goes to `armingReports`.
    /// `environment`: the watch's clocks (the thread's voluntary switches are always the
    /// simulated ones).
    init(
        threshold: UInt64 = 250 * ThreadWatchHarness.ms, arming: MonitoredThread.ArmingSteps? = nil,
        environment: ThreadWatch.Environment = .init()
    ) {
        let ms = Self.ms
        let switches = self.switches
        tracker = SpanTracker(
            publishAfter: threshold / 2, reentryGrace: 200_000, wakeup: WakeupSignal(),
            voluntarySwitches: { switches.next() })
        let thread = MonitoredThread(tracker: tracker, probe: HandFedProbe())
        let events = self.events
        if let arming {
            thread.arm(
                signal: 40, sampleTimeout: 10 * ms, maxFrames: 64,
                report: { message in events.armingReports.withLock { $0.append(message) } }, steps: arming)
        } else {
            thread.armedTID.store(Kernel.currentThreadID(), ordering: .releasing)
        }
        watch = ThreadWatch(
            thread: thread,
            settings: .init(
                threshold: threshold, lead: threshold / 2, interval: 10 * ms, sampleTimeout: 10 * ms,
                maxSamples: 200, maxFrames: 64, reentryGrace: 200_000, unwinding: .snapshot, symbolicateInProcess: true,
                stackCopyBytes: 65_536,
                signal: 0, inProgressRefresh: 1_000 * ms, reportWhileDebugged: true),
            counters: counters, controls: MonitorControls(),
            environment: environment.withVoluntarySwitches { switches.next() },
            emit: { event in events.list.withLock { $0.append(event) } })
    }

    /// What arming reported (with `arming:` steps).
    var armingReports: [String] { events.armingReports.withLock { $0 } }

    /// Everything emitted so far.
    var emitted: [StallEvent] { events.list.withLock { $0 } }

    /// The recordings of the `ended` events emitted so far.
    var endedStalls: [StallRecording] {
        emitted.compactMap { if case .ended(let recording) = $0 { recording } else { nil } }
    }
}

/// A probe that feeds nothing: the harness drives the tracker by hand.
final class HandFedProbe: LoopProbe {
    let kind = "runLoop"
    func attach(to tracker: SpanTracker, arm: @escaping @Sendable () -> Void) {}
    func detach() {}
}

extension ThreadWatch.Environment {
    /// This environment with the thread's voluntary switches read from `switches`.
    func withVoluntarySwitches(_ switches: @escaping () -> UInt64?) -> Self {
        var copy = self
        copy.threadVoluntarySwitches = switches
        return copy
    }
}
