import Testing

@testable import StallMonitor

/// The typed names of sampling keep the strings reports, session records and `stallreport` read.
@Suite struct SamplingNamesTests {
    /// Skip reasons are written under their old names.
    @Test func skipReasonsKeepTheirNames() {
        let names: [SkipReason: String] = [
            .afterSpanEnd: "afterSpanEnd", .noUnwinder: "noUnwinder", .blockedWithoutLibdw: "blockedWithoutLibdw",
            .threadMoved: "threadMoved", .unwindFailed: "unwindFailed", .signalTakenOver: "signalTakenOver",
            .busy: "busy",
            .signalBlocked: "signalBlocked", .signalPending: "signalPending", .notClearlyRunning: "notClearlyRunning",
            .sendFailed: "sendFailed", .threadUnreadable: "threadUnreadable", .watchdogStarved: "watchdogStarved",
        ]
        for (reason, name) in names { #expect(reason.rawValue == name) }
        #expect(Set(names.values).count == names.count)
    }

    /// Scheduler states, unwinder, loop kind and dropped-report names are the letters and names
    /// reports carried before they were typed; unknown ones are kept as they are.
    @Test func otherNamesKeepTheirStrings() {
        #expect(SchedulerState.running.rawValue == "R")
        #expect(SchedulerState.unknown.rawValue == "?")
        #expect(SchedulerState(rawValue: "D") == "D")
        #expect(UnwinderName.libdw.rawValue == "libdw")
        #expect(UnwinderName.libunwindRemote.rawValue == "libunwind-remote")
        #expect(UnwinderName.libunwind.rawValue == "libunwind")
        #expect(UnwinderName.unavailable.rawValue == "unavailable")
        #expect(SnapshotUnwinder.Backend.libdw.name == .libdw)
        #expect(LoopKind.runLoop.rawValue == "runLoop")
        #expect(LoopKind.mainActor.rawValue == StallMonitor.mainActorKind)
        #expect(LoopKind.concurrencyPool.rawValue == StallMonitor.concurrencyPoolKind)
        #expect(DroppedReportReason.reportWrite.rawValue == "reportWrite")
        #expect(DroppedReportReason.reportEncoding.rawValue == "reportEncoding")
        #expect(DroppedReportReason.rateLimitedToSummary.rawValue == "rateLimitedToSummary")
        #expect(DroppedReportReason.deletedForQuota.rawValue == "deletedForQuota")
        #expect(DroppedReportReason.watchdogStarved.rawValue == "watchdogStarved")
    }

    /// A sample without a stack of a thread asleep in a syscall carries the syscall's PC.
    @Test func sampleWithoutStackKeepsTheSyscallPC() {
        var reading = SampleReading(ThreadProcFiles(tid: Kernel.currentThreadID()), now: 10, spanStart: 4)
        reading.syscallName = "nanosleep"
        reading.knownPC = 0x1234
        reading.state = "S"
        let sample = reading.sampleWithoutStack(note: "n")
        #expect(sample.kind == .syscall)
        #expect(sample.addresses == [0x1234])
        #expect(sample.offset == 6)
        reading.syscallName = nil
        #expect(reading.sampleWithoutStack(note: "n").kind == .none)
        #expect(reading.sampleWithoutStack(note: "n").addresses.isEmpty)
    }
}
