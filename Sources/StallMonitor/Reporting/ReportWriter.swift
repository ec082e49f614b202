import Foundation
import Logging
import StallReportModel

/// What the watchdog tells the writer about a stall.
enum StallEvent {
    /// The span is past the threshold and still open: (re)write its `inProgress` report.
    case inProgress(StallRecording)
    /// The stall ended: write its final report.
    case ended(StallRecording)
    /// An announced span turned out not to be a stall (expected long work, process stopped, …):
    /// remove its `inProgress` report.
    case retracted(StallID)
}

/// The writer: builds, encodes and stores reports on its own thread (a ``SerialWorkThread``, which
/// also works in a forked child), off the monitored thread and off the watchdog's timing path.
/// In-progress snapshots of one stall replace each other (a queued older one is skipped); the
/// final report replaces them all. Failures are counted and said once, never thrown.
final class ReportWriter: Sendable {
    private struct StallFile {
        var name: String
        var written = false
        var latestSnapshot = 0
    }

    private let queue = SerialWorkThread(name: "stall-writer")
    private let builder: ReportBuilder
    private let store: ReportFileStore
    private let errors: ErrorReporter
    private let counters: MonitorCounters
    private let limiter: FingerprintRateLimiter
    private let session: SessionRecorder
    private let metrics: StallMetrics?
    private let onReport: (@Sendable (StallReport, URL) -> Void)?
    private let files = Locked<[StallID: StallFile]>([:])
    /// System calls found refused, each said once (after a report, whose samples found them).
    private let denials = SyscallDenialWatch()

    init(
        builder: ReportBuilder, store: ReportFileStore, errors: ErrorReporter, counters: MonitorCounters,
        limiter: FingerprintRateLimiter, session: SessionRecorder, metrics: StallMetrics? = nil,
        onReport: (@Sendable (StallReport, URL) -> Void)?
    ) {
        self.builder = builder
        self.store = store
        self.errors = errors
        self.counters = counters
        self.limiter = limiter
        self.session = session
        self.metrics = metrics
        self.onReport = onReport
    }

    /// Says on the host's logger that a stall was reported, with its facts in metadata.
    private func logWritten(_ report: StallReport, to url: URL) {
        errors.logger.info(
            "StallMonitor: \(Int(report.durationMs.rounded())) ms stall (\(report.classification.rawValue)) on \(report.loop.threadName)",
            metadata: [
                "path": "\(url.path)",
                "stallmonitor.fingerprint": "\(report.fingerprint)",
                "stallmonitor.classification": "\(report.classification.rawValue)",
                "stallmonitor.durationMs": "\(Int(report.durationMs.rounded()))",
                "stallmonitor.loop": "\(report.loop.kind)",
                "stallmonitor.thread": "\(report.loop.threadName)",
            ])
    }

    /// Queues work for the writer thread.
    func perform(_ work: @escaping @Sendable () -> Void) {
        queue.async(work)
    }

    /// Runs `jobs` as their schedules say, from one timer thread (queued ones on the writer
    /// queue), until the returned timer is cancelled.
    func repeating(_ jobs: [RepeatingTimer.Job]) -> RepeatingTimer {
        RepeatingTimer(enqueue: { [queue] in queue.async(counted: false, $0) }, jobs: jobs)
    }

    /// Hands a stall event to the writer.
    func submit(_ event: StallEvent) {
        switch event {
        case .inProgress(let recording):
            let version = files.withLock { files -> Int in
                var file =
                    files[recording.stallID] ?? StallFile(name: store.fileName(startedAt: recording.wallClockStart))
                file.latestSnapshot += 1
                files[recording.stallID] = file
                return file.latestSnapshot
            }
            let box = UncheckedBox(recording)
            perform { [self] in
                let latest = files.withLock { $0[box.value.stallID]?.latestSnapshot }
                guard latest == version else { return }  // a newer snapshot is queued
                // Every snapshot goes to disk at once with the names already known (none the
                // first time), then, unless a newer one is queued, again with every frame named:
                // looking up new addresses can take a while (the first lookups of a session read
                // a binary's symbol and line tables), and must not hold up the evidence.
                let quick = builder.build(box.value, status: .inProgress, naming: .cached)
                if write(quick.report, stallID: box.value.stallID) != nil {
                    counters.inProgressWrites.add(1, ordering: .relaxed)
                }
                guard !quick.complete, files.withLock({ $0[box.value.stallID]?.latestSnapshot }) == version else {
                    return
                }
                if write(
                    builder.build(box.value, status: .inProgress, naming: .full).report, stallID: box.value.stallID)
                    != nil
                {
                    counters.inProgressWrites.add(1, ordering: .relaxed)
                }
            }
        case .ended(let recording):
            files.withLock { files in
                if files[recording.stallID] == nil {
                    files[recording.stallID] = StallFile(name: store.fileName(startedAt: recording.wallClockStart))
                }
            }
            let box = UncheckedBox(recording)
            perform { [self] in
                let report = admit(builder.build(box.value, status: .ended, naming: .full).report, at: box.value.end)
                let url = writeFinal(report, stallID: box.value.stallID)
                notify(report, writtenTo: url)
            }
        case .retracted(let stallID):
            perform { [self] in
                guard let file = files.withLock({ $0.removeValue(forKey: stallID) }), file.written else { return }
                store.remove(name: file.name)
            }
        }
    }

    /// Admits a final report past the fingerprint's rate limit: over it, the report is compacted
    /// (and counted). The metrics see the full report first.
    private func admit(_ report: StallReport, at end: UInt64) -> StallReport {
        metrics?.recordStall(report)
        guard !limiter.admit(report.fingerprint, at: end) else { return report }
        counters.reportsRateLimited.add(1, ordering: .relaxed)
        return report.compacted()
    }

    /// Writes a stall's final report and brings the directory within its quota; nil when it could
    /// not be written. Then its `inProgress` version must not outlive it, or the next monitor would
    /// take this stall for the one the process died in: it is removed (which needs no space). The
    /// failure is counted (`reportWrite`, in the session record's dropped reports).
    private func writeFinal(_ report: StallReport, stallID: StallID) -> URL? {
        let url = write(report, stallID: stallID)
        let file = files.withLock { $0.removeValue(forKey: stallID) }
        if url == nil, let file, file.written { store.remove(name: file.name) }
        if let url { store.enforceQuota(keeping: url.lastPathComponent) }
        return url
    }

    /// Tells of a final report: counted, logged and handed to `onReport` when it was written
    /// (`url`); the metrics' dropped counts and the session record are brought up to date either way.
    private func notify(_ report: StallReport, writtenTo url: URL?) {
        if let url {
            counters.reportsWritten.add(1, ordering: .relaxed)
            logWritten(report, to: url)
            onReport?(report, url)
        }
        sayNewSyscallDenials()
        metrics?.syncDropped(counters, errors: errors.counts)
        session.heartbeat()
    }

    /// Says each system call found refused since the last call (on the writer queue: at start,
    /// after each report, at each heartbeat).
    func sayNewSyscallDenials() {
        denials.sayNew(to: errors)
    }

    /// Brings the directory within its quota (call on the writer queue): at start, so session
    /// records of many short-lived monitors are bounded even when no stall is ever reported.
    func enforceQuota() {
        store.enforceQuota()
    }

    /// Waits until queued reports are written, at most `timeout`. Returns false on timeout.
    @discardableResult
    func flush(timeout: Duration) -> Bool {
        queue.wait(timeout: UInt64(clamping: timeout.nanoseconds))
    }

    /// Ends the writer's thread once the queued work is done (at stop, after ``flush(timeout:)``),
    /// waiting for it when `waiting` (not after a flush that timed out: stop stays bounded); work
    /// queued later still runs, on a thread that ends when it is done.
    func close(waiting: Bool) {
        queue.close(waiting: waiting)
    }

    /// Encodes and writes one version of a stall's report; the first version may not replace any
    /// file, later ones replace the earlier versions.
    private func write(_ report: StallReport, stallID: StallID) -> URL? {
        guard let file = files.withLock({ $0[stallID] }) else { return nil }
        let data: Data
        do {
            data = try report.fileData()
        } catch {
            errors.report(.reportEncoding(String(describing: error)))
            return nil
        }
        do {
            // A new file: a name taken by a file that is not ours (another process's, a link
            // planted where the next name was predictable) makes it take another name. The store
            // tells the quota and marks an inProgress version unfinished.
            let (path, name) = try store.write(
                data, name: file.name, replacing: file.written,
                unfinished: report.status == .inProgress
            ) {
                store.fileName(startedAt: report.startedAt)
            }
            files.withLock { files in
                files[stallID]?.written = true
                files[stallID]?.name = name
            }
            return URL(fileURLWithPath: path, isDirectory: false)
        } catch {
            errors.report(error)
            return nil
        }
    }
}

extension StallReport {
    /// The cheap form of a report: everything but the samples, and only the frames and images
    /// of the representative stack and async callers. Counts, durations and the fingerprint stay exact.
    func compacted() -> StallReport {
        var compact = self
        var frameMap: [Int: Int] = [:]
        var imageMap: [Int: Int] = [:]
        compact.frames = []
        compact.images = []
        func keep(_ index: Int) -> Int {
            if let mapped = frameMap[index] { return mapped }
            var frame = frames[index]
            if let image = frame.image {
                if imageMap[image] == nil {
                    imageMap[image] = compact.images.count
                    compact.images.append(images[image])
                }
                frame.image = imageMap[image]
            }
            frameMap[index] = compact.frames.count
            compact.frames.append(frame)
            return compact.frames.count - 1
        }
        compact.representativeStack = representativeStack.map(keep)
        compact.representativeAsyncCallers = representativeAsyncCallers?.map(keep)
        compact.omittedSamples = samples.count
        compact.samples = []
        compact.rateLimited = true
        return compact
    }
}

/// Carries a value that is handed from one thread to another exactly once.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
