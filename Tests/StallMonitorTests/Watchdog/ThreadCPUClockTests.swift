import Glibc
import StallMonitor
import Testing

/// The watchdog reads other threads' CPU time through a clock id it encodes itself (the kernel's
/// ABI); it must be the clock glibc hands out for the same thread.
@Suite("Thread CPU clock ids")
struct ThreadCPUClockTests {
    @Test("the encoded clock of this thread reads what pthread_getcpuclockid's clock reads")
    func encodingMatchesGlibc() throws {
        var clock = clockid_t()
        try #require(pthread_getcpuclockid(pthread_self(), &clock) == 0)
        func glibcNanos() -> Int64 {
            var time = timespec()
            clock_gettime(clock, &time)
            return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
        }
        var sink: UInt64 = 1
        for _ in 0..<2_000_000 { sink = sink &* 6_364_136_223_846_793_005 &+ 1 }  // some CPU time first
        let before = glibcNanos()
        let encoded = Kernel.threadCPUNanoseconds(Kernel.currentThreadID())
        let after = glibcNanos()
        #expect(sink != 0)
        #expect(before > 0)
        #expect(encoded >= before && encoded <= after, "glibc \(before)…\(after), encoded \(encoded)")
    }
}
