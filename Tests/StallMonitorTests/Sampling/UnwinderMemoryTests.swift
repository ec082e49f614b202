import CStallMonitor
import Foundation
@testable import StallMonitor
import Testing

/// libdw finds a frame's CFI through `.eh_frame_hdr`'s search table, also in binaries linked with
/// `.eh_frame` before `.eh_frame_hdr` (lld, this test bundle): it used to read and cache every FDE
/// up to the one it looked for, megabytes of heap for a big Swift binary.
@Suite("Unwinder memory", .serialized)
struct UnwinderMemoryTests {
    /// Bytes in use on the heap, every arena together.
    private static func heapInUse() -> Int {
        Int(CStallMonitor_heap_in_use())
    }

    @Test("unwinding a stall in this test bundle (94,000 FDEs) grows the heap by less than 3 MiB (6.7–8.6 MiB before), and its stacks are whole")
    func cfiLookupsStaySmall() throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        let loop = try MonitoredLoopThread(name: "unwinder-memory")
        defer { loop.stop() }
        var configuration = directory.configuration()
        configuration.symbolicateInProcess = false  // only the unwinder's session
        let monitor = try loop.startMonitor(configuration)
        defer { monitor.stop() }
        // A fresh session: whatever earlier tests opened is closed and its heap trimmed.
        CacheRelease.releaseIfQuiet(for: 0, now: monotonicNow() + 1)
        #expect(!SnapshotUnwinder.shared.isOpen)
        let before = Self.heapInUse()
        try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 600) }
        #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
        #expect(monitor.flush())
        #expect(SnapshotUnwinder.shared.isOpen)
        let grown = Self.heapInUse() - before
        #expect(grown < 3 << 20, "the heap grew by \(grown) bytes")
        let reports = try directory.reports()
        try #require(reports.count == 1)
        let stacks = reports[0].samples.filter { $0.unwinder == "libdw" && $0.kind == .stack }
        #expect(!stacks.isEmpty, "no sample unwound by libdw")
        // A sample taken at an awkward instant may stop early (as before this change); most reach the entry.
        let whole = stacks.filter { $0.truncated != true }.count
        #expect(whole * 2 > stacks.count, "\(whole) of \(stacks.count) libdw samples reach the thread's entry")
    }
}
