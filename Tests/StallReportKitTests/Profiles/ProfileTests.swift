import Foundation
import Testing

@testable import StallReportKit

@Suite("Stall profiles and call trees")
struct ProfileTests {
    @Test("Every sample weighs the effective interval; missing stacks get synthetic frames")
    func weights() throws {
        let spin = ProfileFixtures.profiles[0]
        #expect(spin.samples.count == 10)
        #expect(spin.samples.allSatisfy { $0.weightMs == 12.5 })
        #expect(spin.sampledMs == 125)
        #expect(spin.samples[0].stack.first?.name == "CFRunLoopRunSpecific")
        #expect(spin.samples[0].stack.last?.name == "__lll_lock_wait")
        #expect(spin.samples[9].stack == [.noStack])
        let wait = ProfileFixtures.profiles[1]
        let syscall = try #require(wait.samples.last)
        #expect(syscall.stack.map(\.name) == ["[syscall nanosleep, not unwound]", "__lll_lock_wait"])
        #expect(ProfileFixtures.profiles.reduce(0) { $0 + $1.sampledMs } == ProfileFixtures.sampledMs)
    }

    @Test("An unnamed frame is named by its image and link-time address")
    func unnamedFrames() {
        var report = ProfileFixtures.report(["App.spin()"], stack: 1)
        report.frames[1].symbol = nil
        let frame = ProfileFrame.of(1, in: report)
        // Image 0 has load bias 0x555500000000; the frame is at 0x555500001040.
        #expect(frame?.name == "App+0x1040")
        #expect(ProfileFrame.of(99, in: report) == nil)
    }

    @Test("Frames of one function are one node even when only some addresses have a file")
    func frameIdentity() {
        let a = ProfileFrame(name: "f", file: "a.swift", image: "App", inApp: true)
        let b = ProfileFrame(name: "f", file: nil, image: "App", inApp: true)
        #expect(a == b)
        #expect(Set([a, b]).count == 1)
        #expect(a != ProfileFrame(name: "f", image: "libc.so.6"))
    }

    @Test("The call tree sums weights, counts samples and puts the heaviest callee first")
    func callTree() throws {
        let tree = CallTree(profiles: ProfileFixtures.profiles)
        #expect(tree.totalMs == ProfileFixtures.sampledMs)
        #expect(tree.sampleCount == 17)
        let top = tree.root.children
        // 12 samples under the run loop (100 + 40 ms), 3 syscall (30 ms), 2 no stack (25 ms).
        #expect(top.map(\.frame.name) == ["CFRunLoopRunSpecific", "[syscall nanosleep, not unwound]", "[no stack]"])
        #expect(top.map(\.weightMs) == [140, 30, 25])
        #expect(top.map(\.samples) == [12, 3, 2])
        let tick = try #require(top[0].children.first?.children.first)
        #expect(tick.frame.name == "App.tick()")
        #expect(tick.children.map(\.frame.name) == ["App.spin()", "App.wait()"])
        #expect(tick.children.map(\.weightMs) == [100, 40])
        let leaf = try #require(tick.children[0].children.first)
        #expect(leaf.selfMs == 100 && leaf.children.isEmpty)
    }

    @Test("Show renders the facts, a numbered stack and the call tree; colour only when asked")
    func show() throws {
        var report = ProfileFixtures.report(["App.spin()", "App.tick()"], stack: 8, none: 2)
        report.sampling.skipped = ["signalBlocked": 2]
        let plain = ReportShowRenderer().render(report, path: "/r/spin.json")
        #expect(!plain.contains("\u{1B}["))
        #expect(plain.contains("Stall of 1.00 s on thread main (cpu, ended)"))
        #expect(plain.contains("fingerprint     \(report.fingerprint)"))
        #expect(plain.contains("2 skipped (signalBlocked 2)"))
        #expect(plain.contains("Representative stack (leaf first):"))
        // Image names are padded to the longest one (libFoundation.so).
        #expect(
            plain.contains(
                "  1  App\(String(repeating: " ", count: 13))  0x555500001040  App.spin() + 24  /work/app/Sources/App/Stalls.swift:40"
            ))
        #expect(plain.contains("Call tree of all 10 samples (125 ms sampled; heaviest path first):"))
        #expect(plain.contains("   80.0%  8  CFRunLoopRunSpecific"))
        #expect(plain.contains("   20.0%  2  [no stack]"))
        #expect(plain.contains("   80.0%  8        App.spin()"))
        let colored = ReportShowRenderer(style: TextStyle(colors: true)).render(report, path: "/r/spin.json")
        #expect(colored.contains("\u{1B}[1m\u{1B}[36mApp.spin() + 24\u{1B}[0m\u{1B}[0m"))
    }

    @Test("show names a run loop's mode (unknown when not recorded) and no mode for other loops")
    func loopMode() {
        var report = ProfileFixtures.report(["App.spin()"], stack: 4, none: 0)
        let line = { (report: StallReport) in
            ReportShowRenderer().render(report, path: "/r/spin.json").split(separator: "\n")
                .first { $0.hasPrefix("  loop ") }.map(String.init) ?? ""
        }
        #expect(
            line(report).hasSuffix("runLoop, mode kCFRunLoopDefaultMode, 1 pass, longest 1000.0 ms"), "\(line(report))")
        report.loop.mode = nil
        #expect(line(report).hasSuffix("runLoop, mode unknown, 1 pass, longest 1000.0 ms"), "\(line(report))")
        report.loop.kind = "nioEventLoop"
        #expect(line(report).hasSuffix("nioEventLoop, 1 pass, longest 1000.0 ms"), "\(line(report))")
    }

    @Test("Call-tree branches below the minimum share are hidden and counted")
    func minimumShare() {
        let tree = CallTree(profiles: ProfileFixtures.profiles)
        let lines = CallTreeTextRenderer(minPercent: 15).render(tree)
        #expect(!lines.contains { $0.contains("[no stack]") })
        #expect(lines.last == "  (1 branch with less than 15 % of the samples not shown)")
    }
}
