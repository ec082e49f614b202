import Foundation
import StallMonitor

/// One round of the stress run: start the workers, wait for them, then for their threads to go.
struct StressRound {
    /// What a round did and what the process looked like afterwards.
    struct Result: Codable, Sendable {
        var label: String
        var monitored: Bool
        var workers: Int
        var planned: Int
        var produced: [Int: Int] = [:]
        /// Per thread: stalls the loop slept before, i.e. spans the monitor must report.
        var expectedSpans: [Int: Int] = [:]
        var ambiguousWaits = 0
        var shortestStallMs = Double.infinity
        var longestStallMs = 0.0
        var seconds = 0.0
        var joinedAll = false
        var flushedAll = true
        var startErrors: [String] = []
        var stallsDetected = 0
        var reportsWritten = 0
        var reportsRateLimited = 0
        var reportsDeletedForQuota = 0
        var discarded = 0
        var samplesTaken = 0
        var samplesTimedOut = 0
        var inProgressWrites = 0
        var errors: [String: Int] = [:]
        var fileDescriptorsAfter = 0
        var threadsAfter = 0
        var threadsSettleSeconds = 0.0
        var extraThreadNames: [String: Int] = [:]

        var totalProduced: Int { produced.values.reduce(0, +) }
        var totalExpectedSpans: Int { expectedSpans.values.reduce(0, +) }
    }

    var label: String
    var plans: [StressPlan]
    var configuration: StallMonitor.Configuration?

    /// Runs the round; afterwards waits up to `settle` for the thread count to fall to
    /// `threadTarget` (threads the round created, and dispatch workers it woke, exit).
    func run(threadTarget: Int, settle: Duration) -> Result {
        var result = Result(
            label: label, monitored: configuration != nil, workers: plans.count,
            planned: plans.map(\.steps.count).reduce(0, +))
        let clock = ContinuousClock()
        let started = clock.now
        let workers = plans.enumerated().map {
            StressWorker(index: $0.offset, plan: $0.element, configuration: configuration)
        }
        workers.forEach { $0.start() }
        let budget =
            Duration.seconds(120) + .milliseconds(
                plans.map { $0.steps.map { $0.stallMs + $0.gapMs }.reduce(0, +) }.max() ?? 0) * 4
        var joined = 0
        for worker in workers {
            guard let outcome = worker.join(timeout: budget) else { continue }
            joined += 1
            result.produced[outcome.threadID] = outcome.produced
            result.expectedSpans[outcome.threadID] = outcome.expectedSpans
            result.ambiguousWaits += outcome.ambiguousWaits
            result.shortestStallMs = min(result.shortestStallMs, outcome.shortest)
            result.longestStallMs = max(result.longestStallMs, outcome.longest)
            result.flushedAll = result.flushedAll && outcome.flushed
            if let error = outcome.startError { result.startErrors.append(error) }
            if let statistics = outcome.statistics {
                result.stallsDetected += statistics.stallsDetected
                result.reportsWritten += statistics.reportsWritten
                result.reportsRateLimited += statistics.reportsRateLimited
                result.reportsDeletedForQuota += statistics.reportsDeletedForQuota
                result.discarded +=
                    statistics.discardedProcessStopped + statistics.discardedWhileDebugged + statistics.expectedLongWork
                result.samplesTaken += statistics.samplesTaken
                result.samplesTimedOut += statistics.samplesTimedOut
                result.inProgressWrites += statistics.inProgressWrites
                result.errors.merge(statistics.errors, uniquingKeysWith: +)
            }
        }
        result.joinedAll = joined == workers.count
        result.seconds = (clock.now - started).seconds

        let settleStart = clock.now
        while ProcessCounts.threads() > threadTarget && clock.now - settleStart < settle {
            usleep(50_000)
        }
        result.threadsSettleSeconds = (clock.now - settleStart).seconds
        result.threadsAfter = ProcessCounts.threads()
        result.fileDescriptorsAfter = ProcessCounts.fileDescriptors()
        return result
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
