import Foundation
import Testing

@testable import StallMonitor

/// What unwinding costs the host in memory. libdw finds a frame's CFI through `.eh_frame_hdr`'s
/// search table, also in binaries linked with `.eh_frame` before `.eh_frame_hdr` (lld, this test
/// bundle): it used to read and cache every FDE up to the one it looked for, megabytes of heap
/// for a big Swift binary. libunwind's remote unwinder reads the same tables with pread and maps
/// no file at all.
@Suite("Unwinder memory", .serialized)
struct UnwinderMemoryTests {
    /// Bytes in use on the heap, every arena together.
    private static func heapInUse() -> Int {
        Kernel.heapInUse()
    }

    /// The file mappings of this process (path and permissions), counted.
    private static func fileMappings() throws -> [String: Int] {
        let maps = try String(contentsOfFile: "/proc/self/maps", encoding: .utf8)
        var counts: [String: Int] = [:]
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6, fields[5].hasPrefix("/") else { continue }
            counts["\(fields[5].trimmingCharacters(in: .whitespaces)) \(fields[1])", default: 0] += 1
        }
        return counts
    }

    /// A fresh start: whatever earlier tests opened is closed and its heap trimmed.
    private static func releaseSessions() {
        CacheRelease.releaseIfQuiet(for: 0, now: monotonicNow() + 1)
        #expect(!MonitorProcess.shared.unwinder.isOpen)
    }

    /// A loop thread named `name` to unwind while it sleeps, with the snapshot unwinder held and
    /// no session left open from an earlier test (so what `body` measures is its own).
    private static func withUnwinderSession(_ name: String, _ body: (MonitoredLoopThread) throws -> Void) throws {
        let loop = try MonitoredLoopThread(name: name)
        defer { loop.stop() }
        MonitorProcess.shared.unwinder.retain()
        defer { MonitorProcess.shared.unwinder.release() }
        releaseSessions()
        try body(loop)
    }

    @Test(
        "unwinding a stall in this test bundle (94,000 FDEs) with names deferred grows the heap by less than 3 MiB (6.7–8.6 MiB before), and its stacks are whole"
    )
    func cfiLookupsStaySmall() throws {
        try withMonitoredLoop(
            "unwinder-memory",
            configure: { configuration in
                configuration.symbolicateInProcess = false  // only the unwinder's session
            }
        ) { directory, loop, monitor in
            Self.releaseSessions()
            let before = Self.heapInUse()
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 600) }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            #expect(monitor.flush())
            #expect(MonitorProcess.shared.unwinder.isOpen)
            let grown = Self.heapInUse() - before
            #expect(grown < 3 << 20, "the heap grew by \(grown) bytes")
            let reports = try directory.reports()
            try #require(reports.count == 1)
            let backend = SnapshotUnwinder.Backend.preferred(symbolicateInProcess: false).name.rawValue
            let stacks = reports[0].samples.filter { $0.unwinder == backend && $0.kind == .stack }
            #expect(!stacks.isEmpty, "no sample unwound by \(backend)")
            // A sample taken at an awkward instant may stop early (as before this change); most reach the entry.
            let whole = stacks.filter { $0.truncated != true }.count
            #expect(whole * 2 > stacks.count, "\(whole) of \(stacks.count) \(backend) samples reach the thread's entry")
        }
    }

    @Test("libdw unwinding a thread asleep under this test bundle's code grows the heap by less than 3 MiB")
    func libdwHeapStaysSmall() throws {
        try Self.withUnwinderSession("libdw-memory") { loop in
            let before = Self.heapInUse()
            let walks = try AsleepThreadUnwinding.unwind(BlockingCalls.all[0], on: loop, backends: [.libdw])
            let grown = Self.heapInUse() - before
            let stack = try #require(walks.stack(.libdw), "\(walks.outcomes)")
            #expect(stack.complete)
            #expect(grown < 3 << 20, "the heap grew by \(grown) bytes")
        }
    }

    @Test(
        "libunwind-remote maps no file and grows the heap by less than 1 MiB (its 256 KiB stack copy included)",
        .enabled(if: SnapshotUnwinder.Backend.libunwindRemote.loadable().loads))
    func remoteUnwinderMapsNothing() throws {
        try Self.withUnwinderSession("remote-memory") { loop in
            // Loaded once beforehand: the library's own mappings are not the session's.
            _ = MonitorProcess.shared.unwinder.availability(.libunwindRemote)
            Self.releaseSessions()
            var mappingsBefore: [String: Int] = [:]
            var heapBefore = 0
            let walks = try AsleepThreadUnwinding.unwind(BlockingCalls.all[0], on: loop, backends: [.libunwindRemote]) {
                _ in
                mappingsBefore = (try? Self.fileMappings()) ?? [:]
                heapBefore = Self.heapInUse()
            }
            let grown = Self.heapInUse() - heapBefore
            let mappingsAfter = try Self.fileMappings()
            let stack = try #require(walks.stack(.libunwindRemote), "\(walks.outcomes)")
            #expect(stack.complete)
            #expect(stack.frames.count >= 10, "\(stack.frames.count) frames")
            let added = mappingsAfter.filter { key, count in count > mappingsBefore[key, default: 0] }
            #expect(added.isEmpty, "files mapped while unwinding: \(added)")
            // The stack copy (256 KiB, touched only as far as the stack reaches), the session's table of
            // executable mappings (64 KiB), libunwind's address space and cache, the mappings read.
            #expect(grown < 1 << 20, "the heap grew by \(grown) bytes")
        }
    }
}
