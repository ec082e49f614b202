import Foundation
import StallReportKitTestSupport
import Testing

@testable import StallReportKit

/// StallMonitor's own frames (an interposer in the stack of a debug build, gone by tail call in a
/// release build) never shape a report's identity: the representative stack, the fingerprint and
/// the flame graph's default stacks leave them out; `show` names them under the stack.
@Suite("the monitor's own frames")
struct MonitorFrameTests {
    /// A stall blocked in `epoll_pwait` called from the app, with the monitor's `epoll_wait`
    /// between them in every sample when `interposed` (as a debug build has it).
    static func report(interposed: Bool) -> StallReport {
        var report = ReportFixtures.report(
            appSymbols: ["App.waitForEvents()", "App.run()"], durationMs: 400,
            classification: .blocked, leaf: "epoll_pwait")
        guard interposed else { return report }
        report.frames.append(
            StallReport.Frame(
                address: "0x555500009000", image: 0, symbol: "epoll_wait", offset: 90, file: "loop_wakeup.c",
                line: 106, inApp: true, monitor: true))
        let own = report.frames.count - 1
        for index in report.samples.indices {
            var frames = report.samples[index].frameIndices.map { $0 }
            frames.insert(own, at: 1)
            report.samples[index] = StallReport.Sample(
                offsetMs: report.samples[index].offsetMs, kind: .stack, threadState: "S",
                frames: frames)
        }
        let identity = StallIdentity.derive(
            samples: report.samples, frames: report.frames, classification: report.classification,
            images: report.images)
        report.representativeStack = identity.stack
        report.fingerprint = identity.fingerprint
        return report
    }

    @Test("left out of the representative stack and the fingerprint")
    func identity() {
        let debug = Self.report(interposed: true)
        let release = Self.report(interposed: false)
        #expect(debug.fingerprint == release.fingerprint)
        #expect(!debug.representativeStack.contains { debug.frames[$0].isMonitorCode })
        #expect(debug.representativeFunction == "App.waitForEvents()")
        // Without the flag the same frame is the app's and changes the identity (the bug this guards).
        var unmarked = debug
        unmarked.frames[unmarked.frames.count - 1].monitor = nil
        let identity = StallIdentity.derive(
            samples: unmarked.samples, frames: unmarked.frames, classification: unmarked.classification,
            images: unmarked.images)
        #expect(identity.fingerprint != release.fingerprint)
    }

    @Test("left out of the flame graph's stacks unless asked for; named by show")
    func views() {
        let debug = Self.report(interposed: true)
        var names: [[String]] = []
        StallProfile.forEachStack(of: debug) { _, stack in names.append(stack.map(\.name)) }
        #expect(names.allSatisfy { !$0.contains("epoll_wait") } && !names.isEmpty)
        names = []
        StallProfile.forEachStack(of: debug, includingMonitorFrames: true) { _, stack in names.append(stack.map(\.name))
        }
        #expect(names.allSatisfy { $0.contains("epoll_wait") } && !names.isEmpty)
        let lines = ReportShowRenderer().stack(debug)
        #expect(lines.last?.contains("left out: StallMonitor's own frames epoll_wait") == true, "\(lines)")
        #expect(!lines.dropLast().contains { $0.contains("epoll_wait") })
        #expect(ReportShowRenderer().stack(Self.report(interposed: false)).allSatisfy { !$0.contains("left out") })
    }
}
