import Foundation
import StallReportKit
import Testing
import ToolSupport

/// The monitor's stacks against an independent reference: gdb's backtrace of the same thread,
/// parked at the same place (spinning in `Scenarios.parkSpinning`, asleep in `poll` under
/// `Scenarios.parkSleeping`), taken in a separate run of the demo without the monitor (the monitor
/// rightly ignores stalls while a tracer is attached). Both runs have address-space randomisation
/// off (gdb turns it off; the monitored run goes through `setarch -R`), so a frame matches by its
/// code address or, failing that (a spinning leaf is caught at another instruction), by its
/// function name demangled with the toolchain's swift-demangle. At least 90 % of gdb's frames must
/// appear in the report's representative stack, in the same order.
@Suite("Stacks against gdb's backtrace", .serialized, .enabled(if: GDBReference.isAvailable))
struct ReferenceStackTests {
    @Test("a thread parked spinning in one function", arguments: [GDBReference.Park.spin, .sleep], [false, true])
    func matchesTheReference(park: GDBReference.Park, deferNames: Bool) throws {
        let reference = try GDBReference.backtrace(park)
        try #require(reference.count >= 10, "gdb's backtrace is too short to compare: \(reference)")
        try #require(
            reference.first?.name.contains(park.function) == true || park == .sleep,
            "gdb did not stop in \(park.function): \(reference)")

        // Names found in process (stacks by libdw), or later by `stallreport symbolicate` (stacks by
        // libunwind's remote unwinder, which the monitor uses when it does not name frames).
        let directory = try ReportDirectory()
        let written = directory.url.appendingPathComponent("written")
        let run = try StallReportCLI.run(
            [
                "x86_64", "-R", try StallReportCLI.binary(named: "stall-demo").path, "--output", written.path,
                "--only", park.scenario, "--park-seconds", "1.2", "--threshold-ms", "250",
            ] + (deferNames ? ["--defer-symbolication"] : []),
            timeout: 120, executable: "/usr/bin/setarch")
        try #require(run.status == 0, "\(run)")
        var named = written
        if deferNames {
            named = directory.url.appendingPathComponent("named")
            let symbolicate = try StallReportCLI.run(["symbolicate", written.path, "--output", named.path])
            try #require(symbolicate.status == 0, "\(symbolicate)")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: named.path).filter {
            $0.hasPrefix("stall-") && $0.hasSuffix(".json")
        }
        try #require(files.count == 1, "one park, one stall: \(files)\n\(run)")
        let report = try StallReport.read(from: named.appendingPathComponent(files[0]))
        #if arch(x86_64)
        let unwinder = deferNames ? "libunwind-remote" : "libdw"
        #expect(
            report.samples.filter { $0.kind == .stack }.allSatisfy { $0.unwinder == unwinder },
            "\(report.samples.map { $0.unwinder ?? "-" })")
        #endif
        let stack = report.representativeStack.map { report.frames[$0] }

        let matched = GDBReference.matchInOrder(reference: reference, stack: stack)
        let share = Double(matched.count) / Double(reference.count)
        let listing = zip(reference.indices, reference).map { index, frame in
            "\(matched.contains(index) ? "  " : "✗ ")\(frame.address.map { String($0, radix: 16) } ?? "-") \(frame.name)"
        }.joined(separator: "\n")
        let ours = stack.map { "\($0.address) \($0.symbol ?? "?")" }.joined(separator: "\n")
        #expect(
            share >= 0.9,
            "\(matched.count) of \(reference.count) gdb frames in order\ngdb:\n\(listing)\nmonitor:\n\(ours)")
        #expect(stack.contains { $0.symbol?.contains(park.function) == true }, "\(ours)")
        if park == .sleep {
            let sleeping = report.samples.filter { $0.syscall != nil }
            #expect(
                !sleeping.isEmpty && sleeping.allSatisfy { $0.syscall == "poll" && $0.interrupted != true },
                "\(report.samples.map { ($0.syscall, $0.interrupted) })")
        }
    }
}

/// gdb as the reference for a parked thread's stack.
enum GDBReference {
    /// Where the demo's main thread parks.
    enum Park: String, CustomTestStringConvertible, Sendable {
        case spin, sleep

        /// The demo scenario that parks this way.
        var scenario: String { "park-\(rawValue)" }
        /// The function the thread parks in.
        var function: String { self == .spin ? "parkSpinning" : "parkSleeping" }
        var testDescription: String { self == .spin ? "spinning" : "asleep in poll" }
    }

    /// One frame of gdb's backtrace: its pc (absent when gdb omits it, at a breakpoint on a line
    /// start) and its function name, demangled.
    struct Frame: CustomStringConvertible {
        var address: UInt?
        var name: String
        var description: String { "\(address.map { "0x" + String($0, radix: 16) } ?? "-") \(name)" }
    }

    static let isAvailable: Bool = ["/usr/bin/gdb", "/usr/bin/setarch"].allSatisfy {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// gdb's backtrace of the demo's main thread parked as `park`, without the monitor: at the
    /// park function's first line (spin), or at the entry of the `poll` syscall it makes (sleep).
    static func backtrace(_ park: Park) throws -> [Frame] {
        var commands = [
            "set pagination off", "set confirm off", "set debuginfod enabled off",
            "set backtrace past-main on", "set print frame-arguments none",
            "rbreak Scenarios.*\(park.function)", "run",
        ]
        if park == .sleep { commands += ["catch syscall poll", "continue"] }
        commands += ["bt", "kill"]
        let demo = try StallReportCLI.binary(named: "stall-demo").path
        let run = try StallReportCLI.run(
            ["-q", "-batch", "-nx"] + commands.flatMap { ["-ex", $0] }
                + ["--args", demo, "--only", park.scenario, "--no-monitor", "--park-seconds", "2"],
            timeout: 120, executable: "/usr/bin/gdb")
        let frames = parse(run.stdout)
        guard !frames.isEmpty else { throw ReferenceError("gdb printed no backtrace:\n\(run)") }
        let names = try demangle(frames.map(\.name))
        return zip(frames, names).map { Frame(address: $0.address, name: $1) }
    }

    /// Frames from gdb's `bt` lines: `#3  0x0000… in name (…) at file:line` or `#0  name (…) at …`.
    static func parse(_ output: String) -> [Frame] {
        var frames: [Frame] = []
        for line in output.split(separator: "\n") where line.hasPrefix("#") {
            var words = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst()
            var address: UInt?
            if let first = words.first, first.hasPrefix("0x"), let value = UInt(first.dropFirst(2), radix: 16) {
                address = value
                words = words.dropFirst()
                if words.first == "in" { words = words.dropFirst() }
            }
            guard let name = words.first, name != "??" else {
                frames.append(Frame(address: address, name: ""))
                continue
            }
            frames.append(Frame(address: address, name: String(name)))
        }
        return frames
    }

    /// Names demangled by the toolchain's swift-demangle (others come back unchanged).
    static func demangle(_ names: [String]) throws -> [String] {
        let input = Data((names.joined(separator: "\n") + "\n").utf8)
        let (status, output) = try runFilter("/usr/bin/env", ["swift-demangle", "--compact"], input: input)
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .map(String.init)
        guard status == 0, lines.count >= names.count else {
            throw ReferenceError("swift-demangle failed (status \(status)) on \(names)")
        }
        return Array(lines.prefix(names.count))
    }

    /// Indices of the reference frames found in `stack` in the same order (greedy): same code
    /// address (a report keeps a caller's return address minus one, gdb the return address), or
    /// the same function name (versioned ELF names compared without their `@` suffix, the C
    /// library's internal aliases such as `__GI___poll` without their prefix and underscores).
    static func matchInOrder(reference: [Frame], stack: [StallReport.Frame]) -> Set<Int> {
        func plain(_ name: String) -> String {
            var name = Substring(name.prefix { $0 != "@" })
            if name.hasPrefix("__GI_") { name = name.dropFirst(5) }
            return String(name.drop { $0 == "_" })
        }
        var matched = Set<Int>()
        var next = 0
        for (index, frame) in reference.enumerated() {
            let found = stack[next...].firstIndex { ours in
                let address = UInt(ours.address.dropFirst(2), radix: 16)
                if let address, let theirs = frame.address, theirs == address || theirs == address + 1 { return true }
                return !frame.name.isEmpty && ours.symbol.map(plain) == plain(frame.name)
            }
            if let found {
                matched.insert(index)
                next = found + 1
            }
        }
        return matched
    }

    struct ReferenceError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
