import Foundation
import StallMonitor
import StallReportKit
import Testing

/// Evidence on disk while a stall lasts: the `inProgress` report appears soon after the threshold,
/// is refreshed while the stall goes on, and becomes the `ended` report under the same name.
@Suite("Production: inProgress reports while a stall lasts", .serialized)
struct ProductionInProgressTests {
    /// One version of the stall file seen by the polling test thread.
    struct Seen {
        var name: String
        var atMs: Double
        var status: StallStatus
        var durationMs: Double
    }

    @Test(
        "a 3 s stall: inProgress on disk within threshold + a few intervals, refreshed every 400 ms, then ended under the same name"
    )
    func inProgressIsWrittenRefreshedAndEnded() throws {
        try withMonitoredLoop(
            "in-progress",
            configure: { configuration in
                // 250 ms, 10 ms interval
                // Refreshed every 400 ms (default 1 s), so a 3 s stall has several versions to catch even
                // when reading a report is slow (sanitizers), and even when libdw's first unwinding and
                // symbolication (reading the test binary's CFI and DWARF) hold up the watchdog and the
                // writer for most of a second: under AddressSanitizer on a loaded machine the first
                // symbolicated version came 1 s into the stall.
                configuration.inProgressRefresh = .milliseconds(400)
            }
        ) { directory, loop, monitor in
            let start = monotonicNow()
            let stall = loop.perform { measureMilliseconds { StallingWork.spinOnCPUForStallTest(milliseconds: 3_000) } }
            // Poll the directory from this thread while the loop thread stalls (deadline 10 s). Each
            // version is a new file renamed into place (a new inode and change time): its bytes are
            // kept at once and decoded after the stall, so a slow decoder (sanitizers) cannot make the
            // poll miss a version.
            var versions: [(name: String, identity: String, atMs: Double, data: Data)] = []
            var measured: Double?
            let deadline = ContinuousClock.now + .seconds(10)
            while measured == nil && ContinuousClock.now < deadline {
                for file in directory.reportFiles() {
                    guard let handle = try? FileHandle(forReadingFrom: file) else { continue }
                    defer { try? handle.close() }
                    var info = stat()
                    guard fstat(handle.fileDescriptor, &info) == 0 else { continue }
                    // Inode numbers are reused: the change time tells two files with one number apart.
                    let identity = "\(info.st_ino)@\(info.st_ctim.tv_sec).\(info.st_ctim.tv_nsec)"
                    guard !versions.contains(where: { $0.name == file.lastPathComponent && $0.identity == identity }),
                        let data = try? handle.readToEnd()
                    else { continue }
                    versions.append((file.lastPathComponent, identity, Double(monotonicNow() - start) / 1e6, data))
                }
                measured = try? stall.wait(timeout: .milliseconds(3))
            }
            let elapsed = try #require(measured, "the stalling closure did not finish in 10 s")
            let seen = try versions.map { version in
                let report = try StallReport.decode(from: version.data)  // never half-written
                return Seen(
                    name: version.name, atMs: version.atMs, status: report.status, durationMs: report.durationMs)
            }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")

            let inProgress = seen.filter { $0.status == .inProgress }
            let first = try #require(inProgress.first, "no inProgress report was seen during the stall: \(seen)")
            // Threshold 250 ms + a few 10 ms intervals; generous for a shared 2-core machine and sanitizers.
            #expect(first.atMs <= 250 + 250, "first inProgress report seen \(first.atMs) ms into the stall")
            #expect(first.durationMs >= 250 && first.durationMs < 600, "\(first)")
            // Refreshed while the stall lasts: a later inProgress version covers at least 400 ms more.
            let longest = inProgress.map(\.durationMs).max() ?? 0
            #expect(longest - first.durationMs >= 390, "inProgress versions seen: \(inProgress); \(monitor.statistics)")
            #expect(monitor.statistics.inProgressWrites >= 3, "\(monitor.statistics)")

            // The end: exactly one stall file, same name, status ended, with the measured duration.
            let files = directory.reportFiles()
            try #require(files.count == 1, "\(files.map(\.lastPathComponent))")
            #expect(files[0].lastPathComponent == first.name)
            #expect(Set(inProgress.map(\.name)) == [first.name])
            let report = try StallReport.read(from: files[0])
            #expect(report.status == .ended)
            #expect(
                durationCovers(report.durationMs, measured: elapsed),
                "report \(report.durationMs) ms, measured \(elapsed) ms")
            #expect(permissionBits(files[0]) == 0o600)
            #expect(!directory.entries().contains { $0.hasSuffix(".tmp") }, "\(directory.entries())")
        }
    }
}
