import Testing

@testable import StallMonitor

/// How the pool probe dates a job it sees for the first time: from the job's enqueue when that
/// came after the look before (the coarse clock's half tick added), else from the middle of the
/// interval (nil here); never outside the interval between the two looks.
@Suite("Pool job start estimate")
struct PoolJobStartEstimateTests {
    let tick: UInt64 = 4_000_000

    /// The start estimate of a job of `task` enqueued at `enqueuedAt`, seen by a look at 400 ms
    /// whose look before was at 100 ms.
    func start(task: UInt = 0x1000, enqueuedAt: UInt64) -> UInt64? {
        PoolJobKey(task: task, taskID: 7, enqueueMark: task | 1, enqueuedAt: enqueuedAt)
            .startEstimate(lastLook: 100_000_000, now: 400_000_000, tick: tick)
    }

    @Test("a job enqueued after the last look starts at its enqueue plus half a tick")
    func enqueuedAfterLastLook() {
        #expect(start(enqueuedAt: 110_000_000) == 112_000_000)
    }

    @Test("an enqueue within a tick before the last look (the coarse clock lags) starts at the last look")
    func enqueuedWithinATickBefore() {
        #expect(start(enqueuedAt: 97_000_000) == 100_000_000)
    }

    @Test("an enqueue read after the look began starts at the look")
    func enqueuedAfterNow() {
        #expect(start(enqueuedAt: 405_000_000) == 400_000_000)
    }

    @Test("a job enqueued well before the last look, no task, or no known enqueue: the middle (nil)")
    func noEstimate() {
        #expect(start(enqueuedAt: 50_000_000) == nil)
        #expect(start(task: 0, enqueuedAt: 110_000_000) == nil)
        #expect(start(enqueuedAt: 0) == nil)
    }

    @Test("the coarse clock's resolution is a scheduler tick")
    func coarseTick() {
        #expect((1_000_000...10_000_000).contains(Kernel.coarseClockResolution))
    }
}
