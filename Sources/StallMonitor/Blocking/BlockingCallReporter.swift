import Foundation
import Glibc
import StallReportModel

/// A monitor's blocking calls in production: takes the detector's calls once a second (writer
/// queue) while there are any (``gate``: the timer's job sleeps while none come), records each in
/// the metrics timer, aggregates them by call site, and writes one `blocking-*.json` report per
/// ``StallMonitor/BlockingCallOptions/reportInterval`` that had any (and one at stop). Windows
/// follow each other from the start; one that had no call is not written.
final class BlockingCallReporter: Sendable {
    private struct Window {
        var startedAt = Date()
        var startedNanoseconds = Kernel.monotonicNanoseconds()
        var sites: [String: BlockingCallsReport.CallSite] = [:]
        var droppedBefore: UInt64 = 0

        /// Whether the window holds a call or a drop not written yet (`dropped`: the detector's
        /// count so far).
        func holdsAnything(dropped: UInt64) -> Bool { !sites.isEmpty || dropped != droppedBefore }
    }

    /// Durations a call site keeps per report at most (its count counts them all).
    static let durationsKept = 1_000
    /// Thread ids a call site keeps at most.
    static let threadsKept = 16

    private let detector: BlockingCallDetector
    private let options: StallMonitor.BlockingCallOptions
    private let store: ReportFileStore
    private let process: StallReport.Process
    private let tags: [String: String]
    private let metrics: StallMetrics
    private let errors: ErrorReporter
    private let threads: [MonitoredThread]
    private let window = Locked(Window())
    private let number = Locked(0)
    /// Open while calls may be waiting to be taken or a window holds calls not written yet: the
    /// timer's `poll` job runs only then (the detector opens it when it records a call).
    let gate: RepeatingTimer.Gate

    /// Starts the detector; nil (said through `errors`) when blocking calls cannot be watched here.
    static func start(
        options: StallMonitor.BlockingCallOptions, store: ReportFileStore, process: StallReport.Process,
        tags: [String: String], metrics: StallMetrics, errors: ErrorReporter, threads: [MonitoredThread]
    ) -> BlockingCallReporter? {
        let detector: BlockingCallDetector
        let gate = RepeatingTimer.Gate(open: false)
        do {
            detector = try BlockingCallDetector.start(
                .init(
                    threshold: options.threshold, allowedFunctions: options.allowedFunctions,
                    allowedLockOwners: options.allowedLockOwners),
                onRecords: { gate.open() })
        } catch {
            errors.report(.blockingCallsUnwatched(error.description))
            return nil
        }
        // Calls the executable defines itself (a sanitizer's interceptors, a C library linked in
        // statically) bind inside it: its own uses of them are not seen. Calls it merely never
        // makes are no blind spot and are not said.
        let defined = detector.callsUnseenInExecutable.filter(executableDefines)
        if !defined.isEmpty {
            errors.report(
                .blockingCallsUnwatched(
                    "the executable defines \(defined.joined(separator: ", ")) itself (a sanitizer runtime or a statically linked C library?): its own calls of them are not seen"
                ))
        }
        return BlockingCallReporter(
            detector: detector, gate: gate, options: options, store: store, process: process, tags: tags,
            metrics: metrics, errors: errors, threads: threads)
    }

    private init(
        detector: BlockingCallDetector, gate: RepeatingTimer.Gate, options: StallMonitor.BlockingCallOptions,
        store: ReportFileStore, process: StallReport.Process,
        tags: [String: String], metrics: StallMetrics, errors: ErrorReporter, threads: [MonitoredThread]
    ) {
        self.detector = detector
        self.gate = gate
        self.options = options
        self.store = store
        self.process = process
        self.tags = tags
        self.metrics = metrics
        self.errors = errors
        self.threads = threads
    }

    /// Whether the executable itself defines the C function `name` (dlsym finds it in the image
    /// that holds the program's entry point).
    static func executableDefines(_ name: String) -> Bool {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return false }
        let entry = Kernel.programEntry()
        guard entry != 0, let executable = Kernel.imagePath(containing: entry) else { return false }
        return Kernel.imagePath(containing: UInt(bitPattern: symbol)) == executable
    }

    /// Calls the monitor does not see in this process (see ``BlockingCallDetector/unseenCalls``).
    var unseenCalls: [String] { detector.unseenCalls }

    /// Takes the calls made since the last take; writes the window's report when it is over
    /// (writer queue, once a second while the gate is open). Closes the gate when no window holds
    /// calls (closed first: a call recorded from then on opens it again).
    func poll() {
        gate.close()
        let dropped = take()
        let (due, holdsCalls) = window.withLock {
            (
                Kernel.monotonicNanoseconds() &- $0.startedNanoseconds >= UInt64(options.reportInterval.nanoseconds),
                $0.holdsAnything(dropped: dropped)
            )
        }
        if due { writeWindow() }
        if holdsCalls && !due { gate.open() }
    }

    /// Takes what is left, writes it and stops the detector (writer queue, at stop).
    func finish() {
        take()
        writeWindow()
        detector.stop()
    }

    /// Takes the calls made since the last take into the window; returns the calls dropped since start.
    @discardableResult
    private func take() -> UInt64 {
        let (calls, droppedBefore, droppedAfter) = detector.takeCallsAndDrops()
        guard !calls.isEmpty || droppedAfter != droppedBefore else { return droppedAfter }
        let mainThread = Int32(getpid())
        let loopThreads = threads.map { ($0.armedTID.load(ordering: .acquiring), $0.loopKind.rawValue) }
        window.withLock { window in
            // The first call or drop of a window that held nothing dates it.
            if !window.holdsAnything(dropped: droppedBefore) {
                Self.rollForward(&window, interval: UInt64(options.reportInterval.nanoseconds))
            }
            for call in calls {
                let onMainActor = call.drainsMainQueue ?? (call.threadID == mainThread)
                let kind =
                    call.inTask
                    ? (onMainActor ? LoopKind.mainActor.rawValue : LoopKind.concurrencyPool.rawValue)
                    : loopThreads.first { $0.0 == call.threadID }?.1 ?? "markedThread"
                let nanoseconds = UInt64(max(0, call.duration.nanoseconds))
                metrics.recordBlockingCall(loopKind: kind, call: call.call, nanoseconds: nanoseconds)
                let milliseconds = Double(nanoseconds) / 1e6
                let fingerprint = BlockingCallsReport.fingerprint(call: call.call, stack: call.frames.map(\.function))
                let key = fingerprint + "\u{1}" + kind
                if var site = window.sites[key] {
                    site.count += 1
                    site.totalMs += milliseconds
                    site.maxMs = max(site.maxMs, milliseconds)
                    if site.durationsMs.count < Self.durationsKept { site.durationsMs.append(milliseconds) }
                    if site.threads.count < Self.threadsKept, !site.threads.contains(Int(call.threadID)) {
                        site.threads.append(Int(call.threadID))
                    }
                    window.sites[key] = site
                } else {
                    window.sites[key] = BlockingCallsReport.CallSite(
                        call: call.call, loopKind: kind, fingerprint: fingerprint, callSite: call.callSite?.function,
                        count: 1, totalMs: milliseconds, maxMs: milliseconds, durationsMs: [milliseconds],
                        threads: [Int(call.threadID)],
                        stack: call.frames.map(Self.reportFrame),
                        asyncCallers: call.asyncCallers.isEmpty ? nil : call.asyncCallers.map(Self.reportFrame),
                        asyncCallersFromJobStart: call.asyncCallersFromJobStart ? true : nil,
                        asyncCallersReachRoot: call.asyncCallers.isEmpty || call.asyncCallersReachRoot ? nil : false)
                }
            }
        }
        return droppedAfter
    }

    /// An empty window that began more than an interval ago (no call came, so none was written)
    /// is moved on by whole intervals: the window a call lands in is the one of the intervals that
    /// follow each other from the start.
    private static func rollForward(_ window: inout Window, interval: UInt64) {
        let elapsed = Kernel.monotonicNanoseconds() &- window.startedNanoseconds
        guard interval > 0, elapsed >= interval else { return }
        let skipped = elapsed / interval * interval
        window.startedNanoseconds &+= skipped
        window.startedAt += Double(skipped) / 1e9
    }

    /// A frame as the report writes it.
    private static func reportFrame(_ frame: BlockingCall.Frame) -> BlockingCallsReport.Frame {
        BlockingCallsReport.Frame(
            address: ReportCoding.formatAddress(frame.address), symbol: frame.function, file: frame.file,
            line: frame.line)
    }

    /// Writes the window's call sites as one report (none when it had no call) and opens the next.
    private func writeWindow() {
        let dropped = detector.droppedCalls
        let ended = window.withLock { window -> Window in
            let ended = window
            window = Window()
            window.droppedBefore = dropped
            return ended
        }
        let droppedNow = Int(clamping: dropped &- ended.droppedBefore)
        guard !ended.sites.isEmpty || droppedNow > 0 else { return }
        let sorted = ended.sites.values.sorted { ($0.totalMs, $1.fingerprint) > ($1.totalMs, $0.fingerprint) }
        let kept = Array(sorted.prefix(options.maxCallSitesPerReport))
        let report = BlockingCallsReport(
            id: UUID().uuidString, startedAt: ended.startedAt,
            intervalMs: Double(Kernel.monotonicNanoseconds() &- ended.startedNanoseconds) / 1e6,
            thresholdMs: Double(options.threshold.nanoseconds) / 1e6, process: process, callSites: kept,
            omittedCallSites: sorted.count - kept.count, droppedCalls: droppedNow, tags: tags.isEmpty ? nil : tags)
        let data: Data
        do {
            data = try CompactJSONEncoder().encode(report)
        } catch {
            errors.report(.reportEncoding("blocking-calls report: \(error)"))
            return
        }
        let pid = getpid()
        let nextName = {
            self.number.withLock { number in
                number += 1
                return BlockingCallsReport.fileName(date: ended.startedAt, pid: pid, number: number)
            }
        }
        do {
            _ = try store.writeNew(data, name: nextName(), nextName: nextName)
        } catch {
            errors.report(error)
        }
    }
}
