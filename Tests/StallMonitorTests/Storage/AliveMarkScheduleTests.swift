import Testing

@testable import StallMonitor

/// The session's alive marks' schedule: frequent at first, then spaced out to the heartbeat
/// interval, so that a session that dies without `stop()` is dated within max(1 s, 10 %) of its
/// life. (The heartbeat itself, a rewrite of the record, runs every interval.)
@Suite("Alive mark schedule")
struct AliveMarkScheduleTests {
    /// The run times (ns since the start) of `schedule` up to `end`.
    private static func runs(_ schedule: RepeatingTimer.Schedule, until end: UInt64) -> [UInt64] {
        var times: [UInt64] = []
        var time = schedule.period(afterRunAt: 0)
        while time <= end {
            times.append(time)
            time += schedule.period(afterRunAt: time)
        }
        return times
    }

    @Test(
        "ramping up to 60 s: a death at any time within its first hour is at most max(1 s, 10 %) after the last run, once the interval is reached one run a minute"
    )
    func rampingUp() {
        let second: UInt64 = 1_000_000_000
        let schedule = RepeatingTimer.Schedule.rampingUp(to: .seconds(60))
        let runs = Self.runs(schedule, until: 3_600 * second)
        #expect(runs.first == second, "the first mark 1 s after the start")
        // The worst moment to die is just before a run: the error is then the gap to the run before.
        var previous: UInt64 = 0
        for run in runs {
            let life = run  // dying just before `run`
            #expect(run - previous <= max(second, life / 10), "gap \(run - previous) ns before \(run) ns")
            previous = run
        }
        let tenMinutes = runs.filter { $0 <= 600 * second }.count
        #expect(tenMinutes >= 40 && tenMinutes <= 60, "\(tenMinutes) marks in the first 10 minutes")
        let lastHalfHour = runs.filter { $0 > 1_800 * second }
        #expect(lastHalfHour.count == 30, "one a minute once spaced out: \(lastHalfHour.count)")
    }

    @Test("a fixed schedule runs every interval; an interval below 1 ms is run every 1 ms")
    func fixed() {
        #expect(RepeatingTimer.Schedule.every(.seconds(5)).period(afterRunAt: 0) == 5_000_000_000)
        #expect(RepeatingTimer.Schedule.every(.seconds(5)).period(afterRunAt: 1_000_000_000_000) == 5_000_000_000)
        #expect(RepeatingTimer.Schedule.every(.zero).period(afterRunAt: 0) == 1_000_000)
        #expect(
            RepeatingTimer.Schedule.rampingUp(to: .seconds(2)).period(afterRunAt: 1_000_000_000_000) == 2_000_000_000)
    }
}
