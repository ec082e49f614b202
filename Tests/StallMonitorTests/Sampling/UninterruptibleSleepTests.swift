import Foundation
import Glibc
import StallMonitor
import StallReportKit
import Testing

/// A monitored thread in uninterruptible sleep (`D`), made without a kernel module: a thread that
/// calls `vfork` (or `posix_spawn`, which clones with CLONE_VFORK) waits in the kernel, killable
/// only (shown as `D`), until the child execs or exits. Signals other than SIGKILL are not
/// delivered meanwhile. The child waits until the test releases it.
@Suite("A thread in uninterruptible sleep", .serialized)
struct UninterruptibleSleepTests {
    /// What the loop thread did.
    struct Spawned: Sendable {
        var milliseconds: Double
        var started: Bool
        var childStatus: Int32?
    }

    @Test("vfork: the parent in D is never signalled; its stack is copied and unwound; the watchdog never hangs")
    func vforkParentTimesOut() throws {
        let libc = try #require(LibC.load(), "libc's vfork, read and _exit")
        var fds: [Int32] = [-1, -1]
        try #require(pipe(&fds) == 0)
        let (readEnd, writeEnd) = (fds[0], fds[1])
        defer {
            close(readEnd)
            close(writeEnd)
        }
        try Self.expectSampledInD(name: "d-vfork", release: { _ = write(writeEnd, "x", 1) }) {
            // The child shares the parent's memory and stack: it only calls libc's read (which
            // blocks until the test writes) and _exit, through pointers taken before the vfork.
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)
            defer { buffer.deallocate() }
            var pid: pid_t = -1
            let elapsed = measureMilliseconds {
                pid = libc.vfork()
                if pid == 0 {
                    _ = libc.read(readEnd, buffer, 1)
                    libc.exit(0)
                }
            }
            return Spawned(milliseconds: elapsed, started: pid > 0, childStatus: pid > 0 ? waitForChild(pid) : nil)
        } check: { report in
            #expect(
                report.samples.contains { $0.syscall == "vfork" || $0.syscall == "clone" },
                "\(report.samples.map(\.syscall))")
        }
    }

    @Test("posix_spawn: the parent in D (every signal blocked around CLONE_VFORK) is unwound without a signal")
    func posixSpawnParentBlocksSignals() throws {
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("d-state-\(UUID().uuidString).fifo")
            .path
        try #require(mkfifo(fifo, 0o600) == 0, "mkfifo: \(String(cString: strerror(errno)))")
        defer { unlink(fifo) }
        // The child's first file action opens the FIFO for reading, which blocks until the test
        // opens the other end (non-blocking: ENXIO until the child is there).
        let release = {
            var writer: Int32 = -1
            _ = waitUntil(timeout: .seconds(5)) {
                writer = open(fifo, O_WRONLY | O_NONBLOCK)
                return writer >= 0
            }
            #expect(writer >= 0, "the child never opened the FIFO")
            if writer >= 0 { close(writer) }
        }
        try Self.expectSampledInD(name: "d-posix-spawn", release: release) {
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 3, fifo, O_RDONLY, 0)
            let path = strdup("/bin/true")!
            defer { free(path) }
            var argv: [UnsafeMutablePointer<CChar>?] = [path, nil]
            var pid: pid_t = 0
            var result: Int32 = -1
            let elapsed = measureMilliseconds { result = posix_spawn(&pid, path, &actions, nil, &argv, environ) }
            return Spawned(
                milliseconds: elapsed, started: result == 0, childStatus: result == 0 ? waitForChild(pid) : nil)
        } check: { report in
            #expect(
                report.samples.contains { $0.syscall == "clone3" || $0.syscall == "clone" },
                "\(report.samples.map(\.syscall))")
        }
    }

    /// Runs `spawn` on a monitored loop thread, holds that thread in D for 700 ms (checking its
    /// state from /proc), calls `release`, and expects one report of the stall that never
    /// signalled the thread while it was in D (no sample timed out), kept sampling every 10 ms
    /// and passes `check`; then a CPU stall on the same loop is sampled as usual.
    static func expectSampledInD(
        name: String, release: () -> Void, spawn: @escaping @Sendable () -> Spawned,
        check: (StallReport) throws -> Void
    ) throws {
        try withMonitoredLoop(name, label: name) { directory, loop, monitor in
            let pending = loop.perform(spawn)
            var states: [String] = []
            // The hold counts from when the thread is first seen in D: on a loaded machine the loop
            // thread may begin the spawn several milliseconds after it was asked to.
            let seenBy = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < seenBy && loop.schedulerState() != "D" { usleep(500) }
            let holdUntil = ContinuousClock.now + .milliseconds(700)
            while ContinuousClock.now < holdUntil {
                usleep(20_000)
                states.append(loop.schedulerState())
            }
            release()
            let spawned = try pending.wait()
            #expect(spawned.started)
            #expect(spawned.childStatus.map { exitedNormally($0, code: 0) } == true)
            #expect(spawned.milliseconds >= 700)
            // Once the spawn holds it (the first reading may come before), the thread stays in D.
            let held = states.drop { $0 != "D" }
            #expect(
                held.count >= states.count / 2 && held.allSatisfy { $0 == "D" },
                "the thread should wait in D: \(states)")
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")

            let report = try directory.onlyReport()
            #expect(
                durationCovers(report.durationMs, measured: spawned.milliseconds),
                "\(report.durationMs) ms, spawn took \(spawned.milliseconds) ms")
            let sampling = report.sampling
            // A thread in D sits in a syscall: it is never signalled, its stack is copied and unwound
            // (or, where the unwinder cannot, the syscall's PC is kept). The span goes on for a moment
            // after the spawn returns (waitpid, the callback's return): samples there may interrupt.
            let inD = report.samples.filter { $0.offsetMs < spawned.milliseconds - 10 }
            let stacks = report.samples.filter { $0.kind == .stack }
            // None is interrupted; they name the syscall, except one read while the thread was
            // blocked outside a syscall (a page fault, slow on a VM whose vCPU was descheduled).
            #expect(
                !inD.isEmpty && inD.allSatisfy { $0.interrupted != true } && inD.contains { $0.syscall != nil },
                "\(report.samples.map { ($0.offsetMs, $0.kind, $0.interrupted as Any, $0.syscall as Any) })")
            #expect(sampling.timedOut == 0, "\(sampling)")
            #expect(sampling.taken == stacks.count, "\(sampling)")
            #expect(sampling.attempted >= 20, "the watchdog kept sampling every 10 ms: \(sampling.attempted)")
            #expect(sampling.accountedFor == sampling.attempted, "\(sampling)")
            #expect(report.samples.contains { $0.threadState == "D" }, "\(report.samples.map(\.threadState))")
            try check(report)

            // 900 ms: long enough that the watchdog samples it even when a loaded machine keeps the
            // whole process off the CPUs for a few hundred ms (seen under TSan with other builds
            // running: one attempt in a 400 ms stall, after it ended).
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 900) }
            #expect(monitor.waitForStalls(2), "\(monitor.statistics)")
            let second = try #require(try directory.reports().last)
            // Sampling works normally again (a sample may time out when the VM deschedules the vCPU
            // the thread runs on; stacks are still taken).
            #expect(second.sampling.taken > 0, "\(second.sampling)")
            #expect(
                second.representativeSymbols.contains { $0.contains("spinOnCPUForStallTest") },
                "\(second.representativeSymbols)")
        }
    }
}

/// libc's own `vfork`, `read` and `_exit`, looked up in libc itself: a sanitizer runtime's
/// interceptors (ThreadSanitizer turns vfork into fork) must not run in the vfork child.
private struct LibC: @unchecked Sendable {
    let vfork: @convention(c) () -> pid_t
    let read: @convention(c) (Int32, UnsafeMutableRawPointer?, Int) -> Int
    let exit: @convention(c) (Int32) -> Void

    static func load() -> LibC? {
        guard let handle = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD),
            let vfork = dlsym(handle, "vfork"), let read = dlsym(handle, "read"), let exit = dlsym(handle, "_exit")
        else { return nil }
        return LibC(
            vfork: unsafeBitCast(vfork, to: (@convention(c) () -> pid_t).self),
            read: unsafeBitCast(read, to: (@convention(c) (Int32, UnsafeMutableRawPointer?, Int) -> Int).self),
            exit: unsafeBitCast(exit, to: (@convention(c) (Int32) -> Void).self))
    }
}
