import CoreMetrics
import Foundation
import Synchronization

/// A metrics factory that keeps the values of StallMonitor's `stallmonitor.pool.delay` timer (how
/// long new work waited for a concurrency-pool worker) and ignores every other metric: the demo
/// prints their distribution when it stops (the benchmark's figure 13e reads that line).
final class PoolDelayRecorder: MetricsFactory, Sendable {
    private let values = Mutex<[Int64]>([])

    /// "pool delay: <n> values, p50 <µs> µs, p99 <µs> µs, max <µs> µs"
    func summary() -> String {
        let sorted = values.withLock { $0 }.sorted()
        guard !sorted.isEmpty else { return "pool delay: 0 values" }
        func micros(_ p: Double) -> String {
            let index = min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))
            return String(format: "%.1f", Double(sorted[index]) / 1_000)
        }
        return "pool delay: \(sorted.count) values, p50 \(micros(0.5)) µs, p99 \(micros(0.99)) µs, max \(micros(1)) µs"
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        label == "stallmonitor.pool.delay" ? DelayTimer(values: self) : NOOPMetricsHandler.instance
    }

    fileprivate func record(_ nanoseconds: Int64) {
        values.withLock { $0.append(nanoseconds) }
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        NOOPMetricsHandler.instance
    }
    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        NOOPMetricsHandler.instance
    }
    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler { NOOPMetricsHandler.instance }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        NOOPMetricsHandler.instance
    }
    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyMeter(_ handler: any MeterHandler) {}
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}
}

private final class DelayTimer: TimerHandler, Sendable {
    let values: PoolDelayRecorder

    init(values: PoolDelayRecorder) {
        self.values = values
    }

    func recordNanoseconds(_ duration: Int64) {
        values.record(duration)
    }
}
