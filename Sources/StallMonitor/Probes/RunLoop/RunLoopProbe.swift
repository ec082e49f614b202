import CStallMonitor
import CoreFoundation
import StallReportModel

/// The probe for a `CFRunLoop` (Foundation's `RunLoop`): `CFRunLoopObserver`s in the common
/// modes turn the loop's activities into ``SpanTracker`` events. The callback is a C function
/// pointer: it reads a clock (the counter where the kernel keeps time with it, else the monotonic
/// one; the coarse one for a pass's start) and updates atomics; at a run's entry it also reads the
/// run's mode, on the loop's own thread.
///
/// Two observers, so that the work of every other observer counts in the span: one ordered first
/// for the activities that open a span or a pass (entry, beforeTimers, afterWaiting), one ordered
/// last for those that suspend it (beforeWaiting, exit). Work other observers do when the loop is
/// about to wait (an ``IdleWorkQueue``'s items, say) is still inside the span.
final class RunLoopProbe: LoopProbe, @unchecked Sendable {
    /// The activities observed first: entry, beforeTimers (loop passes), afterWaiting.
    static let openingActivities: CFOptionFlags =
        CFRunLoopActivity.entry.rawValue | CFRunLoopActivity.beforeTimers.rawValue
        | CFRunLoopActivity.afterWaiting.rawValue
    /// The activities observed last: beforeWaiting and exit.
    static let suspendingActivities: CFOptionFlags =
        CFRunLoopActivity.beforeWaiting.rawValue | CFRunLoopActivity.exit.rawValue

    let kind = LoopKind.runLoop.rawValue
    /// The observers stamp the loop's waits and wakes with the counter clock where it is usable.
    let stampsWithCounter = true
    private let runLoop: CFRunLoop
    private var observers: [CFRunLoopObserver] = []
    /// The loop's thread's registration as one that must not block (see ``BlockingCallDetector``).
    private let mustNotBlock = BlockingLoopRegistration()

    /// A probe of `loop`: the main run loop, or the calling thread's.
    convenience init(_ loop: StallMonitor.Loop) {
        self.init(runLoop: loop.cfRunLoop)
    }

    init(runLoop: CFRunLoop) {
        self.runLoop = runLoop
    }

    func attach(to tracker: SpanTracker, arm: @escaping @Sendable () -> Void) {
        CStallMonitor_run_loop_mode_discover()  // once per process: where a loop keeps its mode
        let events = RunLoopEvents(runLoop: runLoop, tracker: tracker)
        // Started inside a run of the loop (from a callout, or while it runs on another thread):
        // the observers never see that run's entry, so its exit must still count as the outermost,
        // and its mode is read now (from another thread this takes the loop's lock, once, here).
        // On the loop's own thread the loop is awake in a callout right now: a span is open (the
        // next pass may follow without the loop ever waiting, so no afterWaiting would open one).
        let onLoopThread = CFRunLoopGetCurrent() === runLoop
        if let mode = CFRunLoopCopyCurrentMode(runLoop) {
            events.enterRunInProgress(mode: mode)
            tracker.assumeInsideRun(awakeAt: onLoopThread ? CStallMonitor_monotonic_ns() : nil)
        }
        observers = [
            Self.observer(Self.openingActivities, order: Int.min, events: events),
            Self.observer(Self.suspendingActivities, order: Int.max, events: events),
        ]
        for observer in observers { CFRunLoopAddObserver(runLoop, observer, kCFRunLoopCommonModes) }
        let mustNotBlock = mustNotBlock
        if onLoopThread {
            arm()
            mustNotBlock.registerCallingThread()
        } else {
            CFRunLoopPerformBlock(runLoop, kCFRunLoopCommonModes) {
                arm()
                mustNotBlock.registerCallingThread()
            }
            CFRunLoopWakeUp(runLoop)
        }
    }

    /// The armed thread; before the loop first ran, the main thread for the main run loop.
    func runsLoopWork(on tid: Int32, armedTID: Int32) -> Bool {
        armedTID != 0 ? armedTID == tid : runLoop === CFRunLoopGetMain() && tid == getpid()
    }

    func detach() {
        mustNotBlock.release()
        for observer in observers {
            CFRunLoopRemoveObserver(runLoop, observer, kCFRunLoopCommonModes)
            CFRunLoopObserverInvalidate(observer)
        }
    }

    private static func observer(_ activities: CFOptionFlags, order: Int, events: RunLoopEvents) -> CFRunLoopObserver {
        RunLoopObserver.make(activities, order: order, info: events) { _, activity, info in
            guard let info else { return }
            // The observer holds a reference (context retain): no retain/release per callback.
            Unmanaged<RunLoopEvents>.fromOpaque(info)._withUnsafeGuaranteedRef {
                $0.record(activity)
            }
        }
    }
}

extension StallMonitor.Loop {
    /// The CF run loop this names: the main thread's, or the calling thread's.
    var cfRunLoop: CFRunLoop { self == .main ? CFRunLoopGetMain() : CFRunLoopGetCurrent() }
}

/// What the observers of one run loop call: turns activities into tracker events and keeps the
/// mode of each nested run. Its mutable state is touched only on the loop's thread (and once
/// before the observers are added).
final class RunLoopEvents: @unchecked Sendable {
    private static let maxDepth = 32

    let tracker: SpanTracker
    /// Whether events are stamped with the counter clock (the tracker has a rate for it).
    private let countsTicks: Bool
    private let runLoop: CFRunLoop
    /// The loop's address (`runLoop` keeps the loop alive): no retain per entry.
    private let runLoopPointer: UnsafeRawPointer
    // The state below is touched only on the loop's thread, inside its callbacks, which never
    // overlap: no dynamic exclusivity check (a runtime call per access, a tenth of what the
    // callbacks cost a pass), and the modes in memory of their own (no array's uniqueness check).
    /// The mode index of each run in progress, outermost first (up to ``maxDepth``).
    @exclusivity(unchecked) private var modes: UnsafeMutablePointer<Int>
    @exclusivity(unchecked) private var depth = 0
    /// The last mode name seen (a mode keeps its name for the loop's life) and its index.
    @exclusivity(unchecked) private var lastModeName: UnsafeRawPointer?
    @exclusivity(unchecked) private var lastModeIndex = 0

    init(runLoop: CFRunLoop, tracker: SpanTracker) {
        self.runLoop = runLoop
        self.runLoopPointer = UnsafeRawPointer(Unmanaged.passUnretained(runLoop).toOpaque())
        self.tracker = tracker
        countsTicks = tracker.counterRate != 0
        modes = .allocate(capacity: Self.maxDepth)
        modes.initialize(repeating: 0, count: Self.maxDepth)
    }

    deinit {
        modes.deallocate()
    }

    /// Turns one run loop activity into the tracker's loop event, reading the clock it needs:
    /// where a span may begin or end, the counter (about 9 ns; the tracker reads the monotonic
    /// clock only when a span begins or a wait outlasted the grace) or, where the counter is no
    /// clock, the monotonic one (20–40 ns on a VM); the coarse one (the last tick, a few ns) for
    /// the start of a pass, which only measures the longest pass (a tick's error there changes no
    /// verdict). Those reads are most of the observers' cost per pass.
    @inline(__always)
    func record(_ activity: CFRunLoopActivity) {
        switch activity {
        case .entry:
            enterRun(modeName: CStallMonitor_run_loop_mode(runLoopPointer, lastModeName))
            if countsTicks {
                tracker.loopEntered(ticks: CStallMonitor_counter_ticks())
            } else {
                tracker.loopEntered(at: CStallMonitor_monotonic_ns())
            }
        case .beforeTimers: tracker.passBegan(at: CStallMonitor_coarse_monotonic_ns())
        case .beforeWaiting:
            if countsTicks {
                tracker.loopWillWait(ticks: CStallMonitor_counter_ticks())
            } else {
                tracker.loopWillWait(at: CStallMonitor_monotonic_ns())
            }
            CStallMonitor_blocking_loop_waits(1)  // CoreFoundation's own wait (ppoll) is no blocking call
        case .afterWaiting:
            CStallMonitor_blocking_loop_waits(0)
            if countsTicks {
                tracker.loopWoke(ticks: CStallMonitor_counter_ticks())
            } else {
                tracker.loopWoke(at: CStallMonitor_monotonic_ns())
            }
        case .exit:
            CStallMonitor_blocking_loop_waits(0)
            if countsTicks {
                tracker.loopExited(ticks: CStallMonitor_counter_ticks())
            } else {
                tracker.loopExited(at: CStallMonitor_monotonic_ns())
            }
            leaveRun()
        default: break
        }
    }

    /// The run in progress when the probe attached (its entry was never observed).
    func enterRunInProgress(mode: CFString) {
        enterRun(modeName: UnsafeRawPointer(Unmanaged.passUnretained(mode).toOpaque()))
    }

    /// A run began in the mode whose name (a CFString the loop keeps for its life) is at `modeName`.
    private func enterRun(modeName: UnsafeRawPointer?) {
        // Not `modeName.map(modeIndex)`: the method as a closure retains and releases `self`, two
        // atomic operations at every run's entry (`RunLoop.run()` enters once per source handled).
        var index = 0
        if let modeName { index = modeIndex(modeName) }
        if depth < Self.maxDepth { modes[depth] = index }
        depth += 1
        tracker.noteMode(index)
    }

    private func leaveRun() {
        guard depth > 0 else { return }
        depth -= 1
        // Back in the enclosing run's callout: its mode again (unknown past the depth kept).
        if depth > 0 { tracker.noteMode(depth <= Self.maxDepth ? modes[depth - 1] : 0) }
    }

    private func modeIndex(_ name: UnsafeRawPointer) -> Int {
        if name == lastModeName { return lastModeIndex }
        let mode = Unmanaged<CFString>.fromOpaque(name).takeUnretainedValue()
        let index = tracker.internMode(Self.string(mode) ?? "?")
        lastModeName = name
        lastModeIndex = index
        return index
    }

    private static func string(_ mode: CFString) -> String? {
        let length = CFStringGetLength(mode)
        let capacity = CFStringGetMaximumSizeForEncoding(length, CFStringBuiltInEncodings.UTF8.rawValue) + 1
        var buffer = [CChar](repeating: 0, count: Int(capacity))
        guard CFStringGetCString(mode, &buffer, capacity, CFStringBuiltInEncodings.UTF8.rawValue) else { return nil }
        return CString.decode(buffer)
    }
}
