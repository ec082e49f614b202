import Foundation
import Glibc
import StallMonitor
import StallReportKit
import Testing

/// A report directory that disappears, fills up or turns read-only: the host keeps running, the
/// loop is never blocked, each kind of error is counted and said once.
@Suite("Production: hostile report directories", .serialized)
struct ProductionDirectoryTests {
    @Test("a report directory removed while running is re-created 0700 and the next report is written")
    func removedDirectoryIsRecreated() throws {
        try withMonitoredLoop("dir-removed") { directory, loop, monitor in
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 300) }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            try FileManager.default.removeItem(at: directory.url)

            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 300) }
            #expect(monitor.waitForStalls(2), "\(monitor.statistics)")
            #expect(permissionBits(directory.url) == 0o700)
            let reports = try directory.reports()
            #expect(reports.count == 1)
            #expect(reports.first?.status == .ended)
            #expect(monitor.statistics.reportsWritten == 2)
            #expect(monitor.statistics.errors.isEmpty, "\(monitor.statistics.errors)")
        }
    }

    @Test("a report path whose parent became a regular file: the loop is never blocked, errors counted, said once")
    func parentIsARegularFile() throws {
        let root = ReportDirectory()
        defer { root.remove() }
        let parent = root.url.appendingPathComponent("parent")
        var configuration = StallMonitor.Configuration(reportDirectory: parent.appendingPathComponent("reports"))
        let log = CapturingLogHandler.capture(&configuration)
        let lastError = try Self.expectUnblockedAndSaidOnce(configuration, log: log, name: "dir-under-file") {
            try FileManager.default.removeItem(at: parent)
            try Data("in the way".utf8).write(to: parent)
        } repair: {
            try FileManager.default.removeItem(at: parent)
        }
        #expect(lastError?.description.contains("Not a directory") == true, "\(String(describing: lastError))")
    }

    // 256 KiB: after the repair an inProgress report and its final version (about 30 KiB each,
    // more under ThreadSanitizer) must fit side by side for the atomic replace.
    @Test(
        "a full disk (a 256 KiB tmpfs, filled): ENOSPC is counted and said once; after space is freed reports are written again",
        .enabled(if: ScratchMount.available, "needs root and mount(8)"))
    func fullDisk() throws {
        try withTmpfsDirectory(size: "256k") { root in
            let filler = root.url.appendingPathComponent("filler")
            var configuration = StallMonitor.Configuration(reportDirectory: root.url.appendingPathComponent("reports"))
            let log = CapturingLogHandler.capture(&configuration)
            let lastError = try Self.expectUnblockedAndSaidOnce(configuration, log: log, name: "disk-full") {
                Self.fill(filler)
            } repair: {
                try FileManager.default.removeItem(at: filler)
            }
            #expect(
                lastError?.description.contains("No space left on device") == true, "\(String(describing: lastError))")
        }
    }

    @Test(
        "a read-only bind mount: EROFS is counted and said once, the loop is never blocked; writable again, reports resume",
        .enabled(if: ScratchMount.available, "needs root and mount(8)"))
    func readOnlyDirectory() throws {
        let root = ReportDirectory()
        defer { root.remove() }
        var configuration = root.configuration()
        let log = CapturingLogHandler.capture(&configuration)
        var mount: ScratchMount?
        defer { mount?.unmount() }
        let lastError = try Self.expectUnblockedAndSaidOnce(configuration, log: log, name: "read-only") {
            mount = try ScratchMount.readOnlyBind(root.url)
        } repair: {
            mount?.unmount()
            mount = nil
        }
        #expect(lastError?.description.contains("Read-only file system") == true, "\(String(describing: lastError))")
    }

    /// Starts a monitor on a fresh loop thread, breaks the directory with `breakDirectory`, then
    /// makes two 300 ms stalls: each must take about 300 ms (the sampling never waits for the
    /// disk), a no-op closure must come back at once, write errors must be counted, and each kind
    /// of error must be logged exactly once. Then `repair` and one more stall must be written.
    /// Returns the last error seen before the repair.
    static func expectUnblockedAndSaidOnce(
        _ configuration: StallMonitor.Configuration, log: CapturingLogHandler.Store,
        name: String, breakDirectory: () throws -> Void,
        repair: () throws -> Void
    ) throws -> StallMonitorError? {
        let loop = try MonitoredLoopThread(name: name)
        defer { loop.stop() }
        let monitor = try loop.startMonitor(configuration)
        defer { monitor.stop() }
        #expect(monitor.flush())  // the session record of the start is on disk
        try breakDirectory()

        for count in 1...2 {
            let stalled = try loop.run { measureMilliseconds { StallingWork.spinOnCPUForStallTest(milliseconds: 300) } }
            // The samples' signal handlers run inside this spin; had they waited for the disk,
            // the spin would take far longer. 200 ms of slack: a preempted thread on a loaded
            // machine under a sanitizer overshot 30 ms once.
            #expect(stalled < 300 + 200, "the stall took \(stalled) ms")
            let roundTrip = measureMilliseconds { _ = try? loop.run(timeout: .seconds(2)) { true } }
            #expect(roundTrip < 250, "a no-op closure took \(roundTrip) ms")
            #expect(monitor.waitForStalls(count), "\(monitor.statistics)")
        }
        let statistics = monitor.statistics
        #expect(statistics.stallsDetected == 2)
        #expect(statistics.reportsWritten == 0)
        #expect((statistics.errors["reportWrite"] ?? 0) >= 2, "\(statistics.errors)")
        let lines = log.messages
        #expect(lines.count == statistics.errors.count, "one line per kind of error: \(lines) for \(statistics.errors)")
        #expect(lines.filter { $0.contains("cannot write stall report") }.count == 1, "\(lines)")
        #expect(lines.allSatisfy { $0.hasPrefix("info ") }, "\(lines)")

        try repair()
        try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 300) }
        #expect(monitor.waitForStalls(3), "\(monitor.statistics)")
        // A stall counts as detected before the writer has written its report (under
        // AddressSanitizer a CI run checked in between and saw 0): wait for the writer first.
        #expect(monitor.flush())
        #expect(monitor.statistics.reportsWritten == 1, "\(monitor.statistics)")
        // No new problem is said; the report now written is (one line with its fingerprint).
        let after = log.all.dropFirst(lines.count)
        #expect(
            after.count == 1 && after.allSatisfy { $0.metadata["stallmonitor.fingerprint"] != nil }, "\(log.messages)")
        return statistics.lastError
    }

    /// Writes `url` until the file system is full.
    static func fill(_ url: URL) {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0x55, count: 4096)
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        fsync(fd)
    }
}
