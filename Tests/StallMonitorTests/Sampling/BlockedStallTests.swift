import Foundation
import StallMonitor
import StallReportKit
import Testing

@Suite("A stall waiting for a mutex", .serialized)
struct BlockedStallTests {
    @Test(
        "a wait of about 800 ms for a mutex held by another thread is classified blocked, with the lock and its caller in the stack"
    )
    func mutexWaitIsBlocked() throws {
        try withMonitoredLoop("mutex-stall") { directory, loop, monitor in
            let mutex = TestMutex()
            let released = try mutex.holdOnAnotherThread(milliseconds: 800)  // 400 ms of room for a slow hand-over
            let measured = try loop.run {
                measureMilliseconds { StallingWork.waitForMutexHeldElsewhere(mutex) }
            }
            #expect(released.wait(timeout: .now() + 5) == .success)
            #expect(measured >= 400)
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")

            let report = try directory.onlyReport()
            #expect(
                report.classification == .blocked,
                "CPU \(report.mainThreadCPUMs) ms of \(report.cpuObservedMs) ms observed")
            let symbols = report.representativeSymbols
            #expect(
                symbols.contains { $0.contains("pthread_mutex_lock") || $0.contains("__lll_lock_wait") }, "\(symbols)")
            #expect(symbols.contains { $0.contains("waitForMutexHeldElsewhere") }, "\(symbols)")
            #expect(report.samples.contains { $0.kind == .stack && $0.syscall == "futex" })
            #expect(report.samples.contains { $0.threadState == "S" })
        }
    }
}
