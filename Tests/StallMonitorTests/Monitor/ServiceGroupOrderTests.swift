import Foundation
import Glibc
import Logging
import ServiceLifecycle
import StallMonitor
import StallMonitorServiceLifecycle
import Testing

/// The stall an app service makes in its graceful shutdown, named so reports can be checked for it.
enum ServiceStalls {
    /// Blocks the calling thread (a pool worker) for `milliseconds`.
    @inline(never)
    static func blockDuringGracefulShutdown(milliseconds: Int) {
        usleep(UInt32(milliseconds) * 1000)
    }
}

/// An app service that runs until graceful shutdown, then blocks its pool thread while shutting down.
struct ShutdownStallingService: Service {
    func run() async throws {
        try? await gracefulShutdown()
        ServiceStalls.blockDuringGracefulShutdown(milliseconds: 400)
    }
}

/// `StallMonitorService(configuration)` in a real ServiceGroup of this async program (Swift
/// Testing's: its main thread is parked), listed first as documented; and what it refuses at once.
@Suite("StallMonitorService picks its watch and is listed first", .serialized)
struct ServiceGroupOrderTests {
    @Test(
        "listed first, it watches the MainActor and the pool and reports a stall in a later service's graceful shutdown"
    )
    func watchesTheAppsGracefulShutdown() async throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        let stalls = try StallMonitorService(directory.configuration())
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: stalls), .init(service: ShutdownStallingService())],
                logger: Logger(label: "ServiceGroupOrderTests")))
        let running = Task { try await group.run() }
        let monitor = try await waitForMonitor(of: stalls)
        let kinds = monitor.watchedLoops.map(\.kind)
        #expect(kinds.contains(StallMonitor.concurrencyPoolKind), "\(kinds)")
        #expect(kinds.contains(StallMonitor.mainActorKind), "\(kinds)")
        await group.triggerGracefulShutdown()
        try await running.value  // not cancelled: no error
        #expect(stalls.monitor == nil)
        let all = try directory.reports()
        let reports = all.filter { $0.representativeFunction.contains("blockDuringGracefulShutdown") }
        try #require(reports.count == 1, "\(all.map(\.representativeFunction))")
        #expect(reports[0].loop.kind == StallMonitor.concurrencyPoolKind)
        #expect(reports[0].durationMs >= 300, "\(reports[0].durationMs)")
    }

    @Test(
        "`.main` in a program whose main thread never runs RunLoop.main is refused at construction, saying what to use")
    func refusesTheMainRunLoopOfAnAsyncProgram() throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        let error = #expect(throws: StallMonitorError.self) {
            try StallMonitorService(directory.configuration(), loop: .main)
        }
        #expect(error?.code == .loopNotRunning)
        #expect(error?.reason.contains("StallMonitorService(configuration)") == true, "\(String(describing: error))")
    }

    @Test("`.current` and an invalid configuration are refused at construction")
    func refusesWhatCanNeverWork() throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        let current = #expect(throws: StallMonitorError.self) {
            try StallMonitorService(directory.configuration(), loop: .current)
        }
        #expect(current?.code == .invalidConfiguration)
        var invalid = directory.configuration()
        invalid.threshold = .zero
        let error = #expect(throws: StallMonitorError.self) { try StallMonitorService(invalid) }
        #expect(error?.code == .invalidConfiguration)
    }

    /// Waits (at most 10 s) until the service's monitor runs.
    private func waitForMonitor(of service: StallMonitorService) async throws -> StallMonitor {
        for _ in 0..<1_000 {
            if let monitor = service.monitor { return monitor }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TestTimeout(what: "the service's monitor")
    }
}
