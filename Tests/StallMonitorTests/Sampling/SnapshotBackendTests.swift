import Foundation
import Testing

@testable import StallMonitor

/// The two snapshot unwinders against each other: libunwind's remote unwinder (unwind tables read
/// from the files with pread) must walk a thread asleep in the kernel to exactly the frames libdw
/// finds, through this test bundle's debug code (whose frame pointers are recovered from the
/// stack) and the C library, down to the thread's entry.
@Suite("Snapshot unwinders agree", .serialized, .enabled(if: SnapshotUnwinder.Backend.libunwindRemote.loadable().loads))
struct SnapshotBackendTests {
    @Test(
        "a thread asleep in each of 9 kinds of syscall: libunwind-remote gives libdw's frames, whole, naming the caller"
    )
    func bothBackendsWalkABlockedThreadAlike() throws {
        let loop = try MonitoredLoopThread(name: "two-unwinders")
        defer { loop.stop() }
        MonitorProcess.shared.unwinder.retain()
        defer { MonitorProcess.shared.unwinder.release() }
        MonitorProcess.shared.symbolicator.retain()
        defer { MonitorProcess.shared.symbolicator.release() }
        let images = ["snapshot-backend-test"]  // the images do not change during the test

        for kind in BlockingCalls.all {
            let walks = try AsleepThreadUnwinding.unwind(kind, on: loop, backends: SnapshotUnwinder.Backend.allCases)
            #expect(walks.call.elapsedMs >= 650, "\(kind.function) returned early: \(walks.call)")
            guard let libdw = walks.stack(.libdw), let remote = walks.stack(.libunwindRemote) else {
                Issue.record("\(kind.function): \(walks.outcomes)")
                continue
            }
            let names = MonitorProcess.shared.symbolicator.symbolicate(remote.frames, images: images)
            let symbols = remote.frames.map { names[$0]?.name ?? "?" }
            #expect(
                remote.frames == libdw.frames,
                "\(kind.function)\nlibunwind-remote: \(remote.frames.map { String($0, radix: 16) })\nlibdw: \(libdw.frames.map { String($0, radix: 16) })\n\(symbols)"
            )
            #expect(
                remote.complete && libdw.complete,
                "\(kind.function): whole? remote \(remote.complete), libdw \(libdw.complete)\n\(symbols)")
            #expect(symbols.contains { $0.contains(kind.function) }, "\(kind.function): \(symbols)")
        }
    }

    @Test(
        "with names deferred, a spinning and a sleeping stall are unwound by libunwind-remote, whole, naming the function"
    )
    func deferredNamesUseTheRemoteUnwinder() throws {
        try withMonitoredLoop("remote-unwinder", configure: { $0.symbolicateInProcess = false }) {
            directory, loop, monitor in
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 600) }
            try loop.waitUntilSleeping()
            try loop.run { StallingWork.sleepInUsleepForStallTest(microseconds: 600_000) }
            #expect(monitor.waitForStalls(2), "\(monitor.statistics)")
            #expect(monitor.flush())

            let reports = try directory.reports()
            try #require(reports.count == 2)
            MonitorProcess.shared.symbolicator.retain()
            defer { MonitorProcess.shared.symbolicator.release() }
            for (function, interrupted) in [("spinOnCPUForStallTest", true), ("sleepInUsleepForStallTest", false)] {
                let named = reports.map { report in
                    (
                        report,
                        MonitorProcess.shared.symbolicator.symbolicate(
                            report.frames.compactMap { UInt($0.address.dropFirst(2), radix: 16) },
                            images: ["remote-unwinder-test"])
                    )
                }
                let found = named.first { report, names in
                    report.representativeStack.contains {
                        names[UInt(report.frames[$0].address.dropFirst(2), radix: 16) ?? 0]?.name?.contains(function)
                            == true
                    }
                }
                let (report, _) = try #require(found, "no report names \(function)")
                #expect(report.sampling.unwinder == "libunwind-remote")
                let stacks = report.samples.filter { $0.kind == .stack }
                #expect(
                    !stacks.isEmpty
                        && stacks.allSatisfy { $0.unwinder == "libunwind-remote" && $0.interrupted == interrupted },
                    "\(function): \(report.samples.map { ($0.kind, $0.unwinder ?? "-", $0.interrupted ?? false, $0.note ?? "") })"
                )
                // A sample taken at an awkward instant (a prologue, the signal landing in the C
                // library) may stop early; most reach the thread's entry.
                let whole = stacks.filter { $0.truncated != true }.count
                #expect(
                    whole * 2 > stacks.count,
                    "\(function): \(whole) of \(stacks.count) samples reach the thread's entry")
            }
        }
    }
}
