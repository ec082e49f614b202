import Foundation
import Glibc
import StallMonitor
import Synchronization
import Testing

/// What `stop()` leaves behind in the host: no pending sampling signal that could kill it, no
/// descriptor of ours (only libunwind's own pipe, which it keeps for the life of the process).
@Suite("stop() leaves nothing behind that can hurt the host", .serialized)
struct StopReleasesTests {
    /// The open descriptors of this process whose targets are thread `tid`'s /proc files (only
    /// this test's thread: a monitor released by an earlier test may still be shutting down).
    private static func threadProcDescriptors(tid: Int32) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.compactMap { name in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)"),
                target.contains("/task/\(tid)/")
            else { return nil }
            return target
        }.sorted()
    }

    @Test("stop() closes the monitored thread's /proc descriptors while the monitor object lives on")
    func stopClosesThreadDescriptors() throws {
        try withLoopThread("stop-fds") { directory, loop in
            let before = Self.threadProcDescriptors(tid: loop.tid)
            #expect(before.isEmpty)
            let monitor = try loop.startMonitor(directory.configuration())
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 350) }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            let during = Self.threadProcDescriptors(tid: loop.tid)
            #expect(
                during.contains { $0.hasSuffix("/task/\(loop.tid)/syscall") },
                "the watchdog reads the thread's files: \(during)")

            monitor.stop()
            let after = Self.threadProcDescriptors(tid: loop.tid)
            #expect(after == before, "left open after stop(): \(Set(after).subtracting(before).sorted())")
            withExtendedLifetime(monitor) {}
        }
    }

    @Test(
        "naming and unwinding load no debuginfod client into the host (no libcurl or OpenSSL, no downloads during a stall)"
    )
    func noDebuginfodInTheHost() throws {
        try withMonitoredLoop("no-debuginfod") { directory, loop, monitor in
            try loop.run { StallingWork.sleepInUsleepUntilElapsed(milliseconds: 350) }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            let report = try #require(try directory.reports().first)
            #expect(
                report.representativeSymbols.contains { $0.contains("sleepInUsleepUntilElapsed") },
                "names still come: \(report.representativeSymbols)")
            // Read to the end (String(contentsOfFile:) stops after 4 KiB of a /proc file).
            let handle = try #require(FileHandle(forReadingAtPath: "/proc/self/maps"))
            defer { try? handle.close() }
            let maps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
            let loaded = Set(maps.split(separator: "\n").compactMap { $0.split(separator: " ").last.map(String.init) })
            #expect(loaded.contains { $0.contains("libdw") }, "libdw is in use")
            #expect(
                !loaded.contains { $0.contains("libdebuginfod") || $0.contains("libcurl") },
                "\(loaded.filter { $0.contains("debuginfod") || $0.contains("curl") })")
        }
    }

    @Test(
        "releasing a monitor without stop() does not block the releasing thread; the shutdown finishes on its own thread"
    )
    func deinitDoesNotBlock() throws {
        try withLoopThread("deinit-stop") { directory, loop in
            // The writer is held inside onReport until `gate` opens: a blocking stop() in deinit
            // would wait for it (flushing the queued reports).
            let gate = DispatchSemaphore(value: 0)
            let inCallback = DispatchSemaphore(value: 0)
            var configuration = directory.configuration()
            configuration.onReport = { _, _ in
                inCallback.signal()
                gate.wait()
            }
            var monitor: StallMonitor? = try loop.startMonitor(configuration)
            let sessionURL = try #require(monitor?.sessionRecordURL)
            let signal = try #require(monitor?.signal)
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 350) }
            try #require(inCallback.wait(timeout: .now() + 10) == .success, "no report written")

            let opened = StopFlag()
            let opener = Thread {
                usleep(1_000_000)
                opened.value.store(true, ordering: .sequentiallyConsistent)
                gate.signal()
            }
            opener.start()
            monitor = nil  // the last reference: deinit runs here
            let openedBeforeDeinitReturned = opened.value.load(ordering: .sequentiallyConsistent)
            #expect(!openedBeforeDeinitReturned, "deinit waited for the writer")

            // The shutdown went on without us: the session record ends with a clean stop.
            #expect(waitUntil(timeout: .seconds(10)) { (try? SessionRecordFile(sessionURL).cleanStop) == true })
            #expect(try directory.reports().count == 1)
            // Its last step, as the last monitor, restores the signal's disposition (SIG_DFL).
            #expect(
                waitUntil(timeout: .seconds(10)) {
                    var action = sigaction()
                    sigaction(signal, nil, &action)
                    return unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self) == 0
                })
        }
    }

    @Test(
        "a sample still pending when the last monitor stops is discarded, not delivered with the default action (which kills)"
    )
    func pendingSampleDoesNotKillTheHost() throws {
        // This monitor must be the last to stop: wait until monitors released by earlier tests
        // (whose shutdown runs on a thread of its own) have put every disposition back.
        #expect(
            waitUntil(timeout: .seconds(10)) {
                (realTimeSignalMin...realTimeSignalMax).allSatisfy { candidate in
                    var action = sigaction()
                    sigaction(candidate, nil, &action)
                    return action.sa_flags & SA_SIGINFO == 0
                }
            }, "a monitor of an earlier test is still installed")
        try withMonitoredLoop("stop-pending") { directory, loop, monitor in
            let signal = monitor.signal

            // A thread that blocked the signal after the monitor checked its mask, with a sample sent
            // to it: the signal is pending on that thread when stop() restores the disposition.
            let blocked = DispatchSemaphore(value: 0)
            let stopped = DispatchSemaphore(value: 0)
            let finished = DispatchSemaphore(value: 0)
            let pending = PendingAfterStop()
            let thread = Thread {
                var mask = sigset_t()
                sigemptyset(&mask)
                sigaddset(&mask, signal)
                pthread_sigmask(SIG_BLOCK, &mask, nil)
                pthread_kill(pthread_self(), signal)
                var set = sigset_t()
                sigpending(&set)
                pending.before = sigismember(&set, signal) == 1
                blocked.signal()
                stopped.wait()
                sigpending(&set)
                pending.after = sigismember(&set, signal) == 1
                if pending.after {
                    // Still pending under SIG_DFL: unblocking would terminate the test process. Take
                    // it here so that the failure is reported instead.
                    var zero = timespec(tv_sec: 0, tv_nsec: 0)
                    _ = sigtimedwait(&mask, nil, &zero)
                }
                pthread_sigmask(SIG_UNBLOCK, &mask, nil)
                finished.signal()
            }
            thread.start()
            try #require(blocked.wait(timeout: .now() + 5) == .success)
            try #require(pending.before, "the sample is pending before stop()")

            monitor.stop()
            var action = sigaction()
            sigaction(signal, nil, &action)
            #expect(unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self) == 0, "SIG_DFL restored")
            stopped.signal()
            try #require(finished.wait(timeout: .now() + 5) == .success)
            #expect(!pending.after, "the pending sample must be discarded before SIG_DFL is restored")
        }
    }
}

/// What the blocking thread saw of the pending signal (written by it, read after it signalled).
private final class PendingAfterStop: @unchecked Sendable {
    var before = false
    var after = false
}
