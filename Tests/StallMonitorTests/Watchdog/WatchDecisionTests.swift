import Testing

@testable import StallMonitor

/// The watch's decisions as values: what it does about a span it does not track yet
/// (``UntrackedSpanAction``), how far it has dealt with the thread's spans (``SpanProgress``) and
/// where it is with its thread (``WatchPhase``).
@Suite("Watch decisions")
struct WatchDecisionTests {
    private static let ms: UInt64 = 1_000_000
    private static let lead = 125 * ms
    private static let grace = ms / 5

    private static func action(
        now: UInt64, start: UInt64 = 1_000 * ms, suspendedAt: UInt64? = nil, slept: Bool = true
    ) -> UntrackedSpanAction {
        UntrackedSpanAction.at(
            now, start: start, suspended: suspendedAt != nil, suspendedAt: suspendedAt ?? 0, lead: lead,
            reentryGrace: grace, threadSlept: { slept })
    }

    @Test("an open span is looked at again at its lead, and tracked from then on")
    func openSpan() {
        let start = 1_000 * Self.ms
        #expect(Self.action(now: start + Self.ms) == .lookAgain(at: start + Self.lead))
        #expect(Self.action(now: start + Self.lead) == .track)
        #expect(Self.action(now: start + 10 * Self.lead) == .track)
    }

    @Test("a suspended span waits out the grace; then it ended when the thread slept, or goes on when it did not")
    func suspendedSpan() {
        let start = 1_000 * Self.ms
        let suspended = start + 10 * Self.ms
        #expect(
            Self.action(now: suspended + Self.grace / 2, suspendedAt: suspended)
                == .lookAgain(at: suspended + Self.grace))
        #expect(Self.action(now: suspended + Self.grace, suspendedAt: suspended) == .finishShort)
        // Not slept: preempted between two passes, the span goes on to its lead.
        #expect(
            Self.action(now: suspended + Self.grace, suspendedAt: suspended, slept: false)
                == .lookAgain(at: start + Self.lead))
        // Suspended after its lead (the watchdog came late): within the grace it may go on and
        // is tracked; past it, after a sleep, it ended long and the log will report it.
        let late = start + 2 * Self.lead
        #expect(Self.action(now: late + Self.grace / 2, suspendedAt: late) == .track)
        #expect(Self.action(now: late + Self.grace, suspendedAt: late) == .none)
    }

    @Test("the thread's sleep is asked only once the grace has passed")
    func sleepAskedOnlyPastTheGrace() {
        var asked = 0
        let start = 1_000 * Self.ms
        _ = UntrackedSpanAction.at(
            start + Self.ms / 2 + Self.grace / 2, start: start, suspended: true, suspendedAt: start + Self.ms / 2,
            lead: Self.lead,
            reentryGrace: Self.grace,
            threadSlept: {
                asked += 1
                return true
            })
        #expect(asked == 0)
    }

    @Test(
        "progress: spans finished untracked, tracked and missed; overwritten spans counted from where the watch stands")
    func progress() {
        var progress = SpanProgress()
        #expect(progress.isPending(1))
        progress.finishedUntracked(1, published: 0)
        #expect(!progress.isPending(1) && progress.isPending(2))
        progress.beganTracking(published: 3)
        progress.finishedTracked(2)
        #expect(progress.lastFinished == 2 && progress.nextUnchecked == 4)
        #expect(progress.overwritten(oldest: 4) == 0)
        #expect(progress.overwritten(oldest: 7) == 3)
        progress.finishedMissed(5, index: 7)
        #expect(progress.lastFinished == 5 && progress.nextUnchecked == 8)
        // Finishing untracked never moves the log position back.
        progress.finishedUntracked(6, published: 2)
        #expect(progress.nextUnchecked == 8)
        progress.finishedAtStop(7)
        #expect(progress.lastFinished == 7 && progress.nextUnchecked == 8)
    }

    @Test("phase: a recording set and cleared in place; a gone thread stays gone whatever is set")
    func phase() {
        let recording = StallRecording.fixture(sequence: 3)
        var phase = WatchPhase.waiting
        #expect(phase.recording == nil && !phase.isThreadGone)
        phase.recording = recording
        phase.recording?.stoppedNanos += 5
        #expect(phase.recording?.sequence == 3 && phase.recording?.stoppedNanos == 5)
        phase.recording = nil
        guard case .waiting = phase else {
            Issue.record("cleared: \(phase)")
            return
        }
        phase = .threadGone
        phase.recording = nil
        #expect(phase.isThreadGone && phase.recording == nil)
    }
}
