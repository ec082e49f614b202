import CStallMonitor
import Foundation
import StallReportModel

/// Makes the report of a starved concurrency pool (on the watchdog): when the starvation is
/// noticed, one stack of every worker (``OneShotStack``); when new work finally starts (or the
/// monitor stops), the report, whose duration is how long new work waited.
struct PoolStarvationReport: Sendable {
    /// The settings the monitor's watches sample stalls with: the starvation's stacks are taken
    /// and reported with the same ones.
    let settings: ThreadWatch.Settings
    /// Hands a finished report's recording to the writer.
    let emit: @Sendable (StallRecording) -> Void

    /// The recording of a starvation noticed at `now`: new work queued at `queuedAt` has not
    /// started; `workers` hold the pool.
    func begin(queuedAt: UInt64, now: UInt64, workers: [ConcurrencyPoolProbe.HeldWorker]) -> StallRecording {
        let unwinder = SamplingUnwinder.choose(settings.unwinding, symbolicateInProcess: settings.symbolicateInProcess)
        let stacks = OneShotStack.Settings(
            unwinder: unwinder, signal: settings.signal, sampleTimeout: settings.sampleTimeout,
            stackCopyBytes: settings.stackCopyBytes, maxFrames: settings.maxFrames)
        var samples: [RawSample] = []
        var described: [StallReport.Starvation.Worker] = []
        for worker in workers {
            var sample = OneShotStack.take(tid: worker.tid, offset: now &- queuedAt, settings: stacks)
            let held = worker.heldFor.map { "a task has held it \($0 / 1_000_000) ms" } ?? "no task"
            sample.note = ["thread \(worker.tid) \(worker.name): \(held)", sample.note].compactMap { $0 }.joined(
                separator: "; ")
            described.append(
                .init(
                    threadID: Int(worker.tid), threadName: worker.name,
                    heldMs: worker.heldFor.map(Self.milliseconds), sample: samples.count))
            samples.append(sample)
        }
        let waited = now &- queuedAt
        let taken = samples.filter { $0.kind == .stack }.count
        return StallRecording(
            thread: .init(
                tid: workers.first?.tid ?? CStallMonitor_gettid(), name: "concurrency pool (starved)",
                isMainThread: false,
                loopKind: ConcurrencyPoolProbe.loopKind),
            sequence: 0, spanStart: queuedAt, wallClockStart: Date(timeIntervalSinceNow: -Double(waited) / 1e9),
            threshold: settings.threshold, samples: samples, interval: settings.interval,
            requestedInterval: settings.interval,
            maxSamples: max(settings.maxSamples, samples.count), attempted: samples.count, taken: taken,
            cpuAtTrackingStart: -1, trackingStart: now, unwinder: unwinder,
            starvation: .init(waitedMs: Self.milliseconds(waited), workers: described))
    }

    /// New work started at `end` (or the monitor stopped then, `ongoing`): the report is written.
    func end(_ recording: StallRecording, at end: UInt64, ongoing: Bool) {
        var recording = recording
        recording.end = max(end, recording.spanStart)
        recording.trackingEnd = recording.end
        recording.starvation?.waitedMs = Self.milliseconds(recording.end - recording.spanStart)
        recording.starvation?.ongoing = ongoing ? true : nil
        emit(recording)
    }

    /// Milliseconds rounded to the microsecond, as the report's `durationMs` is.
    private static func milliseconds(_ nanoseconds: UInt64) -> Double {
        (Double(nanoseconds) / 1e6 * 1000).rounded() / 1000
    }
}
