import CStallMonitor
import Foundation
@testable import StallMonitor
import Synchronization
import Testing

/// The two snapshot unwinders against each other: libunwind's remote unwinder (unwind tables read
/// from the files with pread) must walk a thread asleep in the kernel to exactly the frames libdw
/// finds, through this test bundle's debug code (whose frame pointers are recovered from the
/// stack) and the C library, down to the thread's entry.
@Suite("Snapshot unwinders agree", .serialized, .enabled(if: SnapshotUnwinder.Backend.libunwindRemote.loadable().loads))
struct SnapshotBackendTests {
    @Test("a thread asleep in each of 9 kinds of syscall: libunwind-remote gives libdw's frames, whole, naming the caller")
    func bothBackendsWalkABlockedThreadAlike() throws {
        let loop = try MonitoredLoopThread(name: "two-unwinders")
        defer { loop.stop() }
        SnapshotUnwinder.shared.retain()
        defer { SnapshotUnwinder.shared.release() }
        Symbolicator.shared.retain()
        defer { Symbolicator.shared.release() }
        let images = ["snapshot-backend-test"]  // the images do not change during the test

        for kind in BlockingCalls.all {
            let started = Atomic<Bool>(false)
            let call = kind.call
            let pending = loop.perform { () -> BlockingCalls.Outcome in
                started.store(true, ordering: .releasing)
                return call(700)
            }
            #expect(waitUntil(timeout: .seconds(5)) { started.load(ordering: .acquiring) })
            let files = ThreadProcFiles(tid: loop.tid)
            var walks: [SnapshotUnwinder.Backend: (frames: [UInt], complete: Bool)] = [:]
            // Asleep in the call (not in the loop's own wait): found by the caller's name below.
            let asleep = waitUntil(timeout: .seconds(2)) {
                if case .inSyscall = files.syscallState() { return true }
                return false
            }
            #expect(asleep, "\(kind.function) never slept")
            let state = files.syscallState()
            if asleep, case .inSyscall(_, let sp, let pc) = state {
                var low: UInt = 0, high: UInt = 0
                try #require(CStallMonitor_mapping_containing(sp, &low, &high) == 0)
                for backend in SnapshotUnwinder.Backend.allCases {
                    let outcome = SnapshotUnwinder.shared.unwindBlocked(
                        tid: loop.tid, sp: sp, pc: pc, bounds: .init(low: low, high: high), copyBytes: 256 * 1024,
                        maxFrames: 256, backend: backend, stillAsleep: { files.syscallState() == state })
                    if case .stack(let frames, let complete) = outcome {
                        walks[backend] = (frames, complete)
                    } else {
                        Issue.record("\(backend.name) on \(kind.function): \(outcome)")
                    }
                }
            }
            let outcome = try pending.wait(timeout: .seconds(10), what: kind.function)
            #expect(outcome.elapsedMs >= 650, "\(kind.function) returned early: \(outcome)")
            guard let libdw = walks[.libdw], let remote = walks[.libunwindRemote] else { continue }
            let names = Symbolicator.shared.symbolicate(remote.frames, images: images)
            let symbols = remote.frames.map { names[$0]?.name ?? "?" }
            #expect(remote.frames == libdw.frames, "\(kind.function)\nlibunwind-remote: \(remote.frames.map { String($0, radix: 16) })\nlibdw: \(libdw.frames.map { String($0, radix: 16) })\n\(symbols)")
            #expect(remote.complete && libdw.complete, "\(kind.function): whole? remote \(remote.complete), libdw \(libdw.complete)\n\(symbols)")
            #expect(symbols.contains { $0.contains(kind.function) }, "\(kind.function): \(symbols)")
        }
    }
}
