import Foundation
import StallReportKit
import Testing

@testable import StallMonitor

/// libdw's sessions (CFI and DWARF caches, mapped debug files) are released once stalls have
/// been quiet for `releaseCachesAfter`, and the next stall opens them again, fully symbolicated.
@Suite("Cache release after a quiet period", .serialized)
struct CacheReleaseTests {
    @Test(
        "the libdw sessions close after the quiet period; a stall right after, and one later, are still unwound and named with file:line"
    )
    func releasedThenReopened() throws {
        try withMonitoredLoop("cache-release", configure: { $0.releaseCachesAfter = .milliseconds(300) }) {
            directory, loop, monitor in
            for round in 1...3 {
                try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 600) }
                #expect(monitor.waitForStalls(round), "\(monitor.statistics)")
                // The stall's report was written with both sessions open; quiet now, they close.
                #expect(
                    waitUntil(timeout: .seconds(20)) {
                        !MonitorProcess.shared.unwinder.isOpen && !MonitorProcess.shared.symbolicator.isOpen
                    },
                    "round \(round): the sessions were not released within 20 s")
                try #require(try directory.reports().count == round)
            }
            let reports = try directory.reports()
            try #require(reports.count == 3)
            for report in reports {
                #expect(report.symbolication.symbolicator == "libdw")
                #expect(report.anySampleNames("spinOnCPUForStallTest"), "\(report.representativeSymbols)")
                let named = report.representativeStack.map { report.frames[$0] }.first {
                    ($0.symbol ?? "").contains("spinOnCPUForStallTest")
                }
                #expect(
                    named?.file?.hasSuffix("StallingWork.swift") == true && (named?.line ?? 0) > 0,
                    "file:line from DWARF line tables after a reopen: \(String(describing: named))")
                #expect(report.samples.contains { $0.unwinder == "libdw" && $0.kind == .stack })
            }
        }
    }

    @Test(
        "an idle monitor whose caches hold nothing does not wake for their release; a stall's use opens it again and they are released"
    )
    func idleMonitorSkipsTheReleaseJob() throws {
        let timersBefore = Set(BlockingCollectorWakeupTests.threads(named: "stall-heartbeat").map(\.tid))
        // A release job every 50 ms: 20 wake-ups a second of the timer thread while it runs.
        try withMonitoredLoop("cache-idle", configure: { $0.releaseCachesAfter = .milliseconds(100) }) {
            directory, loop, monitor in
            func timer() -> (tid: Int32, switches: Int)? {
                BlockingCollectorWakeupTests.threads(named: "stall-heartbeat").first { !timersBefore.contains($0.tid) }
            }
            // Caches another test used are released after the quiet period; the gate closes then.
            #expect(
                waitUntil(timeout: .seconds(10)) {
                    !MonitorProcess.shared.unwinder.usedSinceRelease
                        && !MonitorProcess.shared.symbolicator.usedSinceRelease
                })
            Thread.sleep(forTimeInterval: 0.3)
            let before = try #require(timer(), "no stall-heartbeat thread of this monitor")
            Thread.sleep(forTimeInterval: 1.0)
            let after = try #require(timer())
            // Left: the session record's alive marks, once a second in its first ten seconds.
            #expect(
                after.switches - before.switches <= 3,
                "the idle monitor's timer woke \(after.switches - before.switches) times in 1 s")

            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 600) }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            #expect(
                waitUntil(timeout: .seconds(20)) {
                    !MonitorProcess.shared.unwinder.isOpen && !MonitorProcess.shared.symbolicator.isOpen
                        && !MonitorProcess.shared.unwinder.usedSinceRelease
                },
                "the sessions the stall's report opened were not released within 20 s")
            #expect(try directory.reports().count == 1)
        }
    }

    @Test("nothing is released while a session is in use more recently than the quiet period")
    func notReleasedWhileRecent() throws {
        // default: 30 s
        try withMonitoredLoop("cache-recent") { directory, loop, monitor in
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 600) }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            #expect(MonitorProcess.shared.unwinder.isOpen)
            #expect(!CacheRelease.releaseIfQuiet(for: 30_000_000_000), "used less than 30 s ago")
            #expect(MonitorProcess.shared.unwinder.isOpen)
            #expect(CacheRelease.releaseIfQuiet(for: 0, now: monotonicNow() + 1), "used before now")
            #expect(!MonitorProcess.shared.unwinder.isOpen && !MonitorProcess.shared.symbolicator.isOpen)
        }
    }

    @Test(
        "the symbolication session of a binary with large DWARF (this test bundle) is closed after its batch; the names stay cached"
    )
    func symbolicationSessionBounded() throws {
        // quiet release: 30 s
        try withMonitoredLoop("cache-bound") { directory, loop, monitor in
            for round in 1...2 {
                try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 500) }
                #expect(monitor.waitForStalls(round), "\(monitor.statistics)")
                if round == 1 {
                    // The first report names the spinning function: its line table is in this bundle.
                    #expect(
                        !MonitorProcess.shared.symbolicator.isOpen,
                        "this test bundle has more than \(Symbolicator.sessionGrowthLimit) bytes of DWARF")
                } else {
                    // Later ones look up only addresses not named yet (a new PC in the spin, a runtime
                    // frame): a session that read no large DWARF for them may stay open.
                    let read = MonitorProcess.shared.symbolicator.openSessionDWARFBytes
                    #expect(
                        read == nil || read! <= Symbolicator.sessionGrowthLimit,
                        "open with \(read ?? 0) bytes of DWARF read")
                }
            }
            let reports = try directory.reports()
            try #require(reports.count == 2)
            for report in reports {
                #expect(report.symbolication.symbolicator == "libdw")
                let named = report.representativeStack.map { report.frames[$0] }.first {
                    ($0.symbol ?? "").contains("spinOnCPUForStallTest")
                }
                #expect(named?.file?.hasSuffix("StallingWork.swift") == true, "\(String(describing: named))")
            }
        }
    }

    @Test("a session counts the DWARF it read: for this test bundle, the .debug_* section sizes readelf lists")
    func dwarfBytesCounted() throws {
        let readelf = try #require(
            ["/usr/bin/readelf", "/usr/bin/eu-readelf"].first { FileManager.default.isExecutableFile(atPath: $0) },
            "readelf is needed for this test")
        let bundle = try #require(Self.imagePath(of: Self.addressInThisBundle()))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: readelf)
        process.arguments = ["-S", "--wide", bundle]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        // "[Nr] Name Type Address Off Size ES Flg Lk Inf Al": the size is the 6th column after "]".
        let expected = output.split(separator: "\n").reduce(0) { total, line in
            guard let bracket = line.firstIndex(of: "]") else { return total }
            let fields = line[line.index(after: bracket)...].split(separator: " ")
            guard fields.count > 4, fields[0].hasPrefix(".debug_"), fields[1] != "NOBITS" else { return total }
            return total + (Int(fields[4], radix: 16) ?? 0)
        }
        try #require(
            expected > Symbolicator.sessionGrowthLimit, "a debug build's test bundle has DWARF: \(expected) bytes")

        let read = try Symbolicator.dwarfBytesRead(lookingUp: [
            Self.addressInThisBundle(), Self.addressInThisBundle() + 1,
        ])
        #expect(read.before == 0, "nothing read before a lookup")
        try #require(read.after.count == 2)
        #expect(read.after[0].found)
        #expect(read.after[0].bytes == expected)
        #expect(read.after[1].found)
        #expect(read.after[1].bytes == expected, "a module is counted once")
    }

    /// An address in this test bundle's code.
    private static func addressInThisBundle() -> UInt {
        unsafeBitCast(CacheReleaseTests.marker as @convention(c) () -> Void, to: UInt.self)
    }

    private static let marker: @convention(c) () -> Void = {}

    /// The file the image containing `address` was loaded from.
    private static func imagePath(of address: UInt) -> String? {
        guard let image = Kernel.imagePath(containing: address) else { return nil }
        return URL(fileURLWithPath: image).resolvingSymlinksInPath().path
    }

    @Test("releaseCachesAfter below 10 ms is rejected")
    func validation() {
        var configuration = ReportDirectory().configuration()
        configuration.releaseCachesAfter = .milliseconds(1)
        #expect(throws: StallMonitorError.self) { try configuration.validate() }
    }
}
