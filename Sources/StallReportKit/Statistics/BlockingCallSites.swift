import Foundation
import StallReportModel

/// One blocking call site over every blocking-calls report read (see ``BlockingCallsReport``):
/// what `stallreport summarize` lists under "Blocking calls" and `gate` budgets.
package struct BlockingCallSiteStats: Codable, Sendable, Equatable {
    /// The call site's fingerprint (its top in-app frames and the call).
    package var fingerprint: String
    /// The C library function: `usleep`, `read`, `futex`, …
    package var call: String
    /// The kind of thread it blocked: `concurrencyPool`, `mainActor`, `nioEventLoop`, `runLoop`, `markedThread`.
    package var loopKind: String
    /// The innermost frame of the app's own code, when known.
    package var callSite: String?
    /// Calls made.
    package var count: Int
    /// Time they blocked, in milliseconds.
    package var totalMs: Double
    /// The longest call, in milliseconds.
    package var maxMs: Double
    /// The median of the durations kept (nearest rank).
    package var p50Ms: Double
    /// The 95th percentile of the durations kept (nearest rank).
    package var p95Ms: Double
    /// Reports the call site appears in.
    package var reports: Int
    /// The file of its first report (in file-name order).
    package var example: String
}

/// Blocking-calls reports folded by call site (fingerprint and loop kind): totals exact, the
/// durations for the percentile as the reports kept them (the first 1,000 of each site per report).
package struct BlockingCallSites: Sendable {
    private struct Accumulator: Sendable {
        var stats: BlockingCallSiteStats
        var durations: [Double]
    }

    private var sites: [String: Accumulator] = [:]
    /// Blocking-calls report files found.
    package var filesFound = 0
    /// Reports read and within the time window.
    package var reportsRead = 0
    /// Reports outside the time window.
    package var reportsFilteredOut = 0
    /// Calls the monitors could not keep, summed over the reports.
    package var droppedCalls = 0
    /// Call sites the monitors left out of their reports (beyond their per-report limit).
    package var omittedCallSites = 0

    package init() {}

    /// Whether any blocking-calls report was found.
    package var isEmpty: Bool { filesFound == 0 }

    /// Folds one report in, when its interval starts inside the filter's time window.
    package mutating func add(_ report: BlockingCallsReport, path: String, filter: RecordFilter) {
        guard filter.admitsStart(report.startedAt) else {
            reportsFilteredOut += 1
            return
        }
        reportsRead += 1
        droppedCalls += report.droppedCalls
        omittedCallSites += report.omittedCallSites
        for site in report.callSites {
            let key = site.fingerprint + "\u{1}" + site.loopKind
            let durations = site.durationsMs.filter(\.isFinite)
            if var accumulator = sites[key] {
                accumulator.stats.count += site.count
                accumulator.stats.totalMs += site.totalMs
                accumulator.stats.maxMs = max(accumulator.stats.maxMs, site.maxMs)
                accumulator.stats.reports += 1
                if path < accumulator.stats.example { accumulator.stats.example = path }
                accumulator.durations += durations
                sites[key] = accumulator
            } else {
                sites[key] = Accumulator(
                    stats: BlockingCallSiteStats(
                        fingerprint: PrintableText.escape(site.fingerprint), call: PrintableText.escape(site.call),
                        loopKind: PrintableText.escape(site.loopKind),
                        callSite: site.callSite.map(PrintableText.escape),
                        count: site.count, totalMs: site.totalMs, maxMs: site.maxMs, p50Ms: 0, p95Ms: 0, reports: 1,
                        example: PrintableText.escape(path)),
                    durations: durations)
            }
        }
    }

    /// Merges another fold (one worker's) in.
    package mutating func merge(_ other: BlockingCallSites) {
        for (key, theirs) in other.sites {
            guard var mine = sites[key] else {
                sites[key] = theirs
                continue
            }
            mine.stats.count += theirs.stats.count
            mine.stats.totalMs += theirs.stats.totalMs
            mine.stats.maxMs = max(mine.stats.maxMs, theirs.stats.maxMs)
            mine.stats.reports += theirs.stats.reports
            mine.stats.example = min(mine.stats.example, theirs.stats.example)
            mine.durations += theirs.durations
            sites[key] = mine
        }
        filesFound += other.filesFound
        reportsRead += other.reportsRead
        reportsFilteredOut += other.reportsFilteredOut
        droppedCalls += other.droppedCalls
        omittedCallSites += other.omittedCallSites
    }

    /// Every call site, most blocked time first (then count, then fingerprint).
    package func stats() -> [BlockingCallSiteStats] {
        sites.values.map { accumulator in
            var stats = accumulator.stats
            let sorted = accumulator.durations.sorted()
            stats.p50Ms = Percentile.nearestRank(50, sorted: sorted) ?? stats.maxMs
            stats.p95Ms = Percentile.nearestRank(95, sorted: sorted) ?? stats.maxMs
            return stats
        }.sorted { a, b in
            if a.totalMs != b.totalMs { return a.totalMs > b.totalMs }
            if a.count != b.count { return a.count > b.count }
            return (a.fingerprint, a.loopKind) < (b.fingerprint, b.loopKind)
        }
    }

    /// Blocked time of every call site, in milliseconds.
    package var totalMs: Double { sites.values.reduce(0) { $0 + $1.stats.totalMs } }
}

/// The blocking calls of a summary: the `blockingCalls` object of `stallreport summarize --format
/// json`, present when any blocking-calls report was found.
package struct BlockingCallsSummary: Codable, Sendable, Equatable {
    /// Blocking-calls reports read (inside the time window).
    package var reports: Int
    /// Reports outside the time window.
    package var filteredOut: Int
    /// Calls, over every call site.
    package var calls: Int
    /// Time they blocked, in milliseconds.
    package var totalMs: Double
    /// Calls the monitors could not keep (their record slots were full).
    package var droppedCalls: Int
    /// Call sites the monitors left out of their reports (beyond their per-report limit).
    package var omittedCallSites: Int
    /// Call sites shown, most blocked time first.
    package var callSites: [BlockingCallSiteStats]
    /// Call sites left out by `--top`.
    package var omittedFromSummary: Int

    /// The summary of `sites`, keeping the `top` call sites with most blocked time (all when nil);
    /// nil when no blocking-calls report was found.
    package init?(_ sites: BlockingCallSites, top: Int?) {
        guard !sites.isEmpty else { return nil }
        let all = sites.stats()
        reports = sites.reportsRead
        filteredOut = sites.reportsFilteredOut
        calls = all.reduce(0) { $0 + $1.count }
        totalMs = sites.totalMs
        droppedCalls = sites.droppedCalls
        omittedCallSites = sites.omittedCallSites
        callSites = Array(all.prefix(top.map { max(0, $0) } ?? all.count))
        omittedFromSummary = all.count - callSites.count
    }
}
