import Foundation
import StallReportKit
import Testing

@testable import StallMonitor

@Suite("Fingerprint components and sample thinning")
struct FingerprintAndRecordingTests {
    private func frame(_ symbol: String?, app: Bool) -> StallReport.Frame {
        StallReport.Frame(address: "0x1", image: nil, symbol: symbol, offset: nil, file: nil, line: nil, inApp: app)
    }

    @Test("the top in-app frames make the fingerprint; system frames and classification are fallbacks")
    func components() {
        let stack = [
            frame("__lll_lock_wait", app: false), frame("pthread_mutex_lock", app: false),
            frame("App.a()", app: true), frame(nil, app: true), frame("App.b()", app: true),
            frame("App.c()", app: true), frame("App.d()", app: true), frame("App.e()", app: true),
            frame("App.f()", app: true),
        ]
        #expect(
            Fingerprint.components(stack: stack, classification: .blocked, syscall: "futex")
                == ["app", "App.a()", "App.b()", "App.c()", "App.d()", "App.e()"])
        let system = [frame("usleep", app: false), frame(nil, app: false), frame("main", app: false)]
        #expect(
            Fingerprint.components(stack: system, classification: .blocked, syscall: nil) == [
                "system", "usleep", "main",
            ])
        #expect(
            Fingerprint.components(stack: [], classification: .blocked, syscall: "clock_nanosleep") == [
                "nostack", "blocked", "clock_nanosleep",
            ])
        #expect(
            Fingerprint.components(stack: [frame(nil, app: true)], classification: .cpu, syscall: nil) == [
                "nostack", "cpu", "-",
            ])
    }

    @Test("linker stubs and sanitizer runtime frames (an instrumented build) are left out")
    func ignoredFrames() {
        let stack = [
            frame("__tsan::ExternalAccess(void*, unsigned long, unsigned long, void*, unsigned long)", app: true),
            frame("__tsan_read8", app: true), frame("___interceptor_clock_gettime", app: true),
            frame("_init", app: true), frame("clock_gettime@plt", app: true), frame("App.a()", app: true),
        ]
        #expect(Fingerprint.components(stack: stack, classification: .cpu, syscall: nil) == ["app", "App.a()"])
        #expect(!Fingerprint.isIgnored("tsan_like_but_mine()") && !Fingerprint.isIgnored("App.__tsan()"))
    }

    @Test("fingerprints depend on the symbols only and are 16 hex digits")
    func fingerprint() {
        let one = Fingerprint.make(["app", "App.a()"])
        #expect(one == Fingerprint.make(["app", "App.a()"]))
        #expect(one != Fingerprint.make(["app", "App.b()"]))
        #expect(one != Fingerprint.make(["app", "App.a()", ""]))
        #expect(one.count == 16 && one.allSatisfy { $0.isHexDigit && !$0.isUppercase })
    }

    @Test("at the bound a recording keeps an evenly spread half, doubles the interval and says so")
    func thinning() {
        var recording = StallRecording.fixture(maxSamples: 4)
        for offset in 0..<4 {
            recording.append(
                RawSample(
                    offset: UInt64(offset), kind: .none, threadState: "R", syscall: nil, note: nil, addresses: [],
                    truncated: false))
        }
        #expect(!recording.thinned)
        recording.append(
            RawSample(
                offset: 4, kind: .none, threadState: "R", syscall: nil, note: nil, addresses: [], truncated: false))
        #expect(recording.thinned)
        #expect(recording.samples.map(\.offset) == [0, 2, 4])
        #expect(recording.dropped == 2)
        #expect(recording.interval == 20_000_000)
        #expect(recording.requestedInterval == 10_000_000)
    }

    @Test(
        "the representative stack is the heaviest common path of the kind most samples have; one sample never decides")
    func representative() {
        let frames = [frame("App.x()", app: true), frame("App.y()", app: true), frame("nanosleep", app: false)]
        func sample(_ kind: StallReport.Sample.Kind, _ indices: [Int]) -> StallReport.Sample {
            StallReport.Sample(
                offsetMs: 0, kind: kind, threadState: "R", syscall: kind == .syscall ? "nanosleep" : nil, note: nil,
                frames: indices, truncated: nil)
        }
        let samples = [
            sample(.syscall, [2]), sample(.syscall, [2]), sample(.stack, [0]), sample(.stack, [1]), sample(.stack, [1]),
            sample(.none, []),
        ]
        #expect(RepresentativeStack.find(samples: samples, frames: frames)?.stack == [1])
        #expect(RepresentativeStack.find(samples: Array(samples.prefix(2)), frames: frames)?.stack == [2])
        #expect(RepresentativeStack.find(samples: Array(samples.prefix(2)), frames: frames)?.syscall == "nanosleep")
        #expect(RepresentativeStack.find(samples: [sample(.none, [])], frames: frames) == nil)
        // One full stack among many syscall-only samples (a thread that woke and ran): the sleep wins.
        let mostlyAsleep = [sample(.stack, [0])] + Array(repeating: sample(.syscall, [2]), count: 5)
        #expect(RepresentativeStack.find(samples: mostlyAsleep, frames: frames)?.stack == [2])
    }

    @Test("the leaf keeps a source line when any agreeing sample has one")
    func representativeLeafLine() {
        var withLine = frame("App.spin()", app: true)
        withLine.file = "App.swift"
        withLine.line = 12
        // Two PCs in the same function: the first sample's has no line, the second's has.
        let frames = [frame("App.spin()", app: true), withLine, frame("App.main()", app: true)]
        func stack(_ indices: [Int]) -> StallReport.Sample {
            StallReport.Sample(
                offsetMs: 0, kind: .stack, threadState: "R", syscall: nil, note: nil, frames: indices, truncated: nil)
        }
        let found = RepresentativeStack.find(samples: [stack([0, 2]), stack([1, 2]), stack([0, 2])], frames: frames)
        #expect(found?.stack == [1, 2])
    }

    @Test("a loop that calls a helper is represented by the loop, however the samples split between them")
    func representativeLoop() {
        // Stacks leaf first: the loop (1) called from main (0), sometimes inside its helper (2).
        let frames = [frame("App.main()", app: true), frame("App.loop()", app: true), frame("App.helper()", app: true)]
        func stack(_ indices: [Int]) -> StallReport.Sample {
            StallReport.Sample(
                offsetMs: 0, kind: .stack, threadState: "R", syscall: nil, note: nil, frames: indices, truncated: nil)
        }
        let mostlyHelper = [stack([2, 1, 0]), stack([2, 1, 0]), stack([2, 1, 0]), stack([1, 0]), stack([1, 0])]
        let mostlyLoop = [stack([2, 1, 0]), stack([2, 1, 0]), stack([1, 0]), stack([1, 0]), stack([1, 0])]
        #expect(
            RepresentativeStack.find(samples: mostlyHelper, frames: frames)?.stack == [2, 1, 0],
            "3 of 5 in the helper: it is on the path")
        #expect(
            RepresentativeStack.find(samples: mostlyLoop, frames: frames)?.stack == [1, 0],
            "2 of 5 in the helper: the loop is the leaf")
    }

    @Test("truncated stacks do not vote when whole stacks exist; alone, they decide")
    func representativeIgnoresTruncated() {
        // Leaf first: the spin (2) called by the closure (1) from main (0); truncated walks that
        // ended in the vDSO (3) after one frame.
        let frames = [
            frame("main", app: true), frame("App.closure()", app: true), frame("App.spin()", app: true),
            frame("__vdso_clock_gettime", app: false),
        ]
        func stack(_ indices: [Int], truncated: Bool = false) -> StallReport.Sample {
            StallReport.Sample(
                offsetMs: 0, kind: .stack, threadState: "R", syscall: nil, note: nil, frames: indices,
                truncated: truncated ? true : nil)
        }
        // 6 whole stacks, 5 in the spin; 5 truncated ones. Counted together, 5 of 11 would reach
        // the spin (below half) and the closure would be the leaf.
        let samples =
            Array(repeating: stack([2, 1, 0]), count: 5) + [stack([1, 0])]
            + Array(repeating: stack([3], truncated: true), count: 5)
        #expect(RepresentativeStack.find(samples: samples, frames: frames)?.stack == [2, 1, 0])
        let onlyTruncated = Array(repeating: stack([3], truncated: true), count: 3)
        #expect(RepresentativeStack.find(samples: onlyTruncated, frames: frames)?.stack == [3])
    }

    @Test("invalid configurations are refused at start")
    func invalidConfiguration() {
        let url = URL(fileURLWithPath: "/tmp/never-created-\(UUID().uuidString)")
        var configurations: [StallMonitor.Configuration] = []
        for change in [
            { (c: inout StallMonitor.Configuration) in c.threshold = .zero },
            { c in c.samplingInterval = .zero },
            { c in c.samplingLead = 2 },
            { c in c.maxSamplesPerStall = 1 },
            { c in c.maxFramesPerSample = 513 },
            { c in c.sampleTimeout = .zero },
            { c in c.reentryGrace = .milliseconds(-1) },
            { c in c.inProgressRefresh = .zero },
            { c in c.rateLimitWindow = .seconds(-1) },
            { c in c.sessionHeartbeatInterval = .milliseconds(999) },
            { c in c.logInterval = .zero },
            { c in c.releaseCachesAfter = .milliseconds(9) },
            { c in c.loopSilenceWarning = .zero },
            { c in c.reportDirectory = URL(string: "https://example.com/reports")! },
        ] {
            var configuration = StallMonitor.Configuration(reportDirectory: url)
            change(&configuration)
            configurations.append(configuration)
        }
        for configuration in configurations {
            #expect {
                _ = try StallMonitor.start(configuration, loop: .current)
            } throws: { error in
                (error as? StallMonitorError)?.code == .invalidConfiguration
            }
        }
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }

    @Test("a monitor whose durations are centuries long starts, watches a real loop and stops (nothing overflows)")
    func hugeDurations() throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        var configuration = directory.configuration(threshold: .seconds(Int64.max))
        // (Not `reentryGrace`: an endless grace rightly makes the loop's activity one span.)
        for keyPath in [
            \StallMonitor.Configuration.samplingInterval, \.sampleTimeout,
            \.inProgressRefresh, \.rateLimitWindow, \.sessionHeartbeatInterval, \.logInterval,
            \.releaseCachesAfter, \.loopSilenceWarning,
        ] {
            configuration[keyPath: keyPath] = .seconds(Int64.max)
        }
        let loop = try MonitoredLoopThread(name: "huge-durations")
        defer { loop.stop() }
        let monitor = try loop.startMonitor(configuration)
        defer { monitor.stop() }
        let spansBefore = monitor.statistics.spans
        for _ in 0..<3 {
            _ = try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 5) }
            try loop.waitUntilSleeping()
        }
        #expect(monitor.statistics.spans > spansBefore)
        #expect(monitor.statistics.stallsDetected == 0)
    }

    @Test("durations convert to whole nanoseconds, negative ones to zero, huge ones to Int64.max")
    func durationNanoseconds() {
        #expect(Duration.milliseconds(250).nanoseconds == 250_000_000)
        #expect(Duration.seconds(3).nanoseconds == 3_000_000_000)
        #expect(Duration.microseconds(200).nanoseconds == 200_000)
        #expect(Duration.milliseconds(-5).nanoseconds == 0)
        #expect(Duration(attoseconds: 999_999_999).nanoseconds == 0)
        #expect(Duration(attoseconds: 1_999_999_999).nanoseconds == 1)
        #expect(Duration.seconds(Int64.max).nanoseconds == UInt64(Int64.max))
        #expect(Duration.seconds(-1).isPositive == false && Duration.zero.isPositive == false)
        #expect(Duration(attoseconds: 1).isPositive)
    }
}
