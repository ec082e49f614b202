import Foundation
import Glibc
import StallReportKit
import StallReportModel
import Testing

@testable import StallMonitor

/// Names taken by files that are not ours (links another local user planted at the names the
/// monitor would use next, in a shared directory): the monitor takes other names, never writes
/// through a link it did not create, and a stall whose final write failed never looks fatal later.
@Suite("Storage: planted names and failed final writes", .serialized)
struct PlantedNameTests {
    /// A file outside the report directory that planted links point at, and its contents.
    private struct Victim {
        let url: URL
        static let contents = "precious, not a report"

        init(in root: URL) throws {
            url = root.appendingPathComponent("victim.txt")
            try Data(Self.contents.utf8).write(to: url)
        }

        var untouched: Bool { (try? String(contentsOf: url, encoding: .utf8)) == Self.contents }
    }

    /// A prepared report directory, `reports`, under a root of the test's own that also holds a
    /// victim file; the root is removed when `body` returns or throws.
    private static func withPlantedDirectory(label: String = #function, _ body: (URL, Victim) throws -> Void) throws {
        try withCreatedDirectory(label: label) { root in
            let victim = try Victim(in: root.url)
            let reports = root.url.appendingPathComponent("reports")
            try ReportFileStore.prepare(reports)
            try body(reports, victim)
        }
    }

    private static func plantLink(at path: String, to victim: Victim) {
        _ = symlink(victim.url.path, path)
    }

    private static func isLink(_ path: String, to victim: Victim) -> Bool {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) == victim.url.path
    }

    /// The name-stamp of every millisecond from `start` to `end` (as report and session names write it).
    private static func stamps(from start: Date, to end: Date) -> [String] {
        let first = Int64((start.timeIntervalSince1970 * 1000).rounded())
        let last = Int64((end.timeIntervalSince1970 * 1000).rounded())
        return (first...last).map { milliseconds in
            String(
                ReportCoding.formatDate(Date(timeIntervalSince1970: Double(milliseconds) / 1000)).filter {
                    $0 != "-" && $0 != ":"
                })
        }
    }

    @Test(
        "a new file whose name is a planted link goes under the next name; the link and its target are untouched; all names taken is an error"
    )
    func storeTakesTheNextName() throws {
        try Self.withPlantedDirectory { reports, victim in
            let store = ReportFileStore(directory: reports, unfinished: UnfinishedFiles())
            Self.plantLink(at: store.path(of: "stall-a.json"), to: victim)

            var offered = ["stall-b.json"]
            let written = try store.writeNew(Data("{}".utf8), name: "stall-a.json") { offered.removeFirst() }
            #expect(written.name == "stall-b.json")
            #expect((try? String(contentsOfFile: written.path, encoding: .utf8)) == "{}")
            #expect(victim.untouched)
            #expect(Self.isLink(store.path(of: "stall-a.json"), to: victim))

            // Every name taken: a reportWrite error after a bounded number of names, nothing written.
            var next = 0
            let names = (0...ReportFileStore.nameAttempts).map { "stall-taken-\($0).json" }
            for name in names { Self.plantLink(at: store.path(of: name), to: victim) }
            #expect(throws: StallMonitorError.self) {
                try store.writeNew(Data("{}".utf8), name: names[0]) {
                    next += 1
                    return names[next]
                }
            }
            #expect(next == ReportFileStore.nameAttempts)
            #expect(victim.untouched)
            #expect(names.allSatisfy { Self.isLink(store.path(of: $0), to: victim) })
        }
    }

    @Test(
        "links planted at every report and session name of the next seconds: the monitor's report and session record go under other names"
    )
    func monitorAvoidsPlantedNames() throws {
        try Self.withPlantedDirectory { reports, victim in
            // Links at the names the next session record and report of this process would take, for
            // every millisecond from 0.2 s before to 2 s after each is planted (just before
            // the monitor starts, and just before the stall).
            let pid = getpid()
            let sessionNumber = MonitorProcess.shared.sessionsStarted.load(ordering: .relaxed) + 1
            let sessionSuffix = sessionNumber > 1 ? "-\(sessionNumber)" : ""
            var planted: [String] = []
            for stamp in Self.stamps(from: Date() - 0.2, to: Date() + 2) {
                planted.append("session-\(stamp)-p\(pid)\(sessionSuffix).session")
            }
            for name in planted { Self.plantLink(at: reports.appendingPathComponent(name).path, to: victim) }

            let loop = try MonitoredLoopThread(name: "planted-names")
            defer { loop.stop() }
            let monitor = try loop.startMonitor(StallMonitor.Configuration(reportDirectory: reports))
            defer { monitor.stop() }
            #expect(monitor.flush())

            func padded(_ number: Int) -> String {
                String(repeating: "0", count: max(0, 4 - String(number).count)) + String(number)
            }
            let reportNumber = MonitorProcess.shared.reportsNamed.load(ordering: .relaxed) + 1
            let plantedReports = Self.stamps(from: Date() - 0.2, to: Date() + 2).map {
                "stall-\($0)-p\(pid)-\(padded(reportNumber)).json"
            }
            for name in plantedReports { Self.plantLink(at: reports.appendingPathComponent(name).path, to: victim) }
            planted += plantedReports
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 400) }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            #expect(monitor.statistics.reportsWritten == 1, "\(monitor.statistics)")
            #expect(monitor.statistics.errors.isEmpty, "\(monitor.statistics.errors)")

            let plantedSet = Set(planted)
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: reports.path)) ?? []
            let ours = entries.filter { !plantedSet.contains($0) && !$0.hasPrefix(".") }
            let report = ours.filter { $0.hasPrefix("stall-") && $0.hasSuffix(".json") }
            try #require(report.count == 1, "\(ours)")
            // Its first name was taken (unless the stall began outside the planted 2.2 s, which would
            // take a preemption of seconds): it went under the next number, same time stamp.
            let firstChoice = report[0].replacingOccurrences(
                of: "-\(padded(reportNumber + 1)).json", with: "-\(padded(reportNumber)).json")
            if plantedSet.contains(firstChoice) {
                #expect(report[0].hasSuffix("-p\(pid)-\(padded(reportNumber + 1)).json"), "\(report[0])")
            }
            #expect(try StallReport.read(from: reports.appendingPathComponent(report[0])).status == .ended)
            let session = monitor.sessionRecordURL.lastPathComponent
            #expect(!plantedSet.contains(session), "\(session)")
            #expect(session.hasPrefix("session-") && session.hasSuffix(".session"), "\(session)")
            #expect(ours.contains(session), "\(ours)")
            #expect(victim.untouched)
            #expect(planted.allSatisfy { Self.isLink(reports.appendingPathComponent($0).path, to: victim) })
        }
    }

    @Test(
        "the disk fills between the inProgress write and the final one: no inProgress report is left behind, the failure is counted",
        .enabled(if: ScratchMount.available, "needs root and mount(8)"))
    func failedFinalWriteLeavesNoInProgressReport() throws {
        try withTmpfsDirectory(size: "256k") { root in
            let reports = root.url.appendingPathComponent("reports")
            let filler = root.url.appendingPathComponent("filler")

            let loop = try MonitoredLoopThread(name: "final-write")
            defer { loop.stop() }
            let monitor = try loop.startMonitor(StallMonitor.Configuration(reportDirectory: reports))
            defer { monitor.stop() }
            #expect(monitor.flush())

            let release = DispatchSemaphore(value: 0)
            defer { release.signal() }
            let stall = loop.perform { release.wait() }
            let inProgress = waitUntil(timeout: .seconds(20)) { monitor.statistics.inProgressWrites >= 1 }
            ProductionDirectoryTests.fill(filler)
            release.signal()
            try stall.wait(timeout: .seconds(10), what: "the stall to end")
            try #require(inProgress, "no inProgress report was written: \(monitor.statistics)")
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")

            let statistics = monitor.statistics
            #expect(statistics.reportsWritten == 0, "\(statistics)")
            #expect((statistics.errors["reportWrite"] ?? 0) >= 1, "\(statistics.errors)")
            let left = ((try? FileManager.default.contentsOfDirectory(atPath: reports.path)) ?? []).filter {
                $0.hasPrefix("stall-")
            }
            #expect(left.isEmpty, "an inProgress report outlived its failed final write: \(left)")

            // With space again, the session record written at stop counts the failure.
            try FileManager.default.removeItem(at: filler)
            monitor.stop()
            let record = try SessionRecord.decode(from: Data(contentsOf: monitor.sessionRecordURL))
            #expect((record.reportsDropped["reportWrite"] ?? 0) >= 1, "\(record.reportsDropped)")
            #expect(record.stalls == 1)
        }
    }
}
