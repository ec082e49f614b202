import Foundation
import StallReportKit

/// The writer: builds, encodes and stores reports on its own serial queue, off the monitored
/// thread and off the watchdog's timing path. Failures are counted and said once, never thrown.
final class ReportWriter: Sendable {
    private let queue = DispatchQueue(label: "StallMonitor.writer", qos: .utility)
    private let pending = DispatchGroup()
    private let builder: ReportBuilder
    private let store: ReportFileStore
    private let errors: ErrorReporter
    private let counters: MonitorCounters
    private let onReport: (@Sendable (StallReport, URL) -> Void)?

    init(builder: ReportBuilder, store: ReportFileStore, errors: ErrorReporter, counters: MonitorCounters, onReport: (@Sendable (StallReport, URL) -> Void)?) {
        self.builder = builder
        self.store = store
        self.errors = errors
        self.counters = counters
        self.onReport = onReport
    }

    /// Queues a finished stall for writing.
    func submit(_ recording: StallRecording) {
        let box = UncheckedBox(recording)
        queue.async(group: pending) { [self] in
            write(box.value)
        }
    }

    /// Waits until queued reports are written, at most `timeout`. Returns false on timeout.
    @discardableResult
    func flush(timeout: Duration) -> Bool {
        pending.wait(timeout: .now() + .nanoseconds(Int(timeout.nanoseconds))) == .success
    }

    private func write(_ recording: StallRecording) {
        let report = builder.build(recording)
        let data: Data
        do {
            data = try report.encoded()
        } catch {
            errors.report(.reportEncoding(String(describing: error)))
            return
        }
        do {
            let url = try store.write(data, name: store.fileName(startedAt: report.startedAt))
            counters.reportsWritten.add(1, ordering: .relaxed)
            onReport?(report, url)
        } catch {
            errors.report(error)
        }
    }
}

/// Carries a value that is handed from one thread to another exactly once.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
