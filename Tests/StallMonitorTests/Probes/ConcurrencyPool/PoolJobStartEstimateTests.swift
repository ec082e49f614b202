import Testing

@testable import StallMonitor

/// How the pool probe dates a job it sees for the first time: from the job's enqueue when that
/// came after the look before (the coarse clock's half tick added), else from the middle of the
/// interval (nil here); never outside the interval between the two looks.
@Suite("Pool job start estimate")
struct PoolJobStartEstimateTests {
    let tick: UInt64 = 4_000_000

    func key(task: UInt, enqueuedAt: UInt64) -> PoolJobKey {
        PoolJobKey(task: task, taskID: 7, enqueueMark: task | 1, enqueuedAt: enqueuedAt)
    }

    @Test("a job enqueued after the last look starts at its enqueue plus half a tick")
    func enqueuedAfterLastLook() {
        #expect(
            key(task: 0x1000, enqueuedAt: 110_000_000).startEstimate(
                lastLook: 100_000_000, now: 400_000_000, tick: tick) == 112_000_000)
    }

    @Test("an enqueue within a tick before the last look (the coarse clock lags) starts at the last look")
    func enqueuedWithinATickBefore() {
        #expect(
            key(task: 0x1000, enqueuedAt: 97_000_000).startEstimate(lastLook: 100_000_000, now: 400_000_000, tick: tick)
                == 100_000_000)
    }

    @Test("an enqueue read after the look began starts at the look")
    func enqueuedAfterNow() {
        #expect(
            key(task: 0x1000, enqueuedAt: 405_000_000).startEstimate(
                lastLook: 100_000_000, now: 400_000_000, tick: tick) == 400_000_000)
    }

    @Test("a job enqueued well before the last look, no task, or no known enqueue: the middle (nil)")
    func noEstimate() {
        #expect(
            key(task: 0x1000, enqueuedAt: 50_000_000).startEstimate(lastLook: 100_000_000, now: 400_000_000, tick: tick)
                == nil)
        #expect(
            key(task: 0, enqueuedAt: 110_000_000).startEstimate(lastLook: 100_000_000, now: 400_000_000, tick: tick)
                == nil)
        #expect(
            key(task: 0x1000, enqueuedAt: 0).startEstimate(lastLook: 100_000_000, now: 400_000_000, tick: tick) == nil)
    }

    @Test("the coarse clock's resolution is a scheduler tick")
    func coarseTick() {
        #expect((1_000_000...10_000_000).contains(Kernel.coarseClockResolution))
    }
}
