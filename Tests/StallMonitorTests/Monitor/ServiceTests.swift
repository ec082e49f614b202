import Foundation
import Logging
import ServiceLifecycle
import StallMonitor
import StallMonitorServiceLifecycle
import Testing

/// StallMonitorService in a real ServiceGroup, and the async forms of stop and flush.
@Suite("StallMonitor as a Service", .serialized)
struct ServiceTests {
    @Test("run() watches until the group shuts down gracefully, then writes the reports and stops")
    func gracefulShutdown() async throws {
        try await withLoopThread("service-loop") { directory, loop in
            let configuration = directory.configuration()
            let service = StallMonitorService { try loop.startMonitor(configuration) }
            let group = ServiceGroup(
                configuration: .init(services: [.init(service: service)], logger: Logger(label: "ServiceTests")))
            let running = Task { try await group.run() }
            let monitor = try await waitForMonitor(of: service)
            _ = try loop.run { usleep(400_000) }
            await group.triggerGracefulShutdown()
            try await running.value
            // Stopped, with the stall's report written before run() returned.
            #expect(service.monitor == nil)
            let reports = try directory.reports()
            #expect(reports.count == 1)
            #expect(reports.first.map { $0.durationMs >= 400 } == true)
            #expect(monitor.statistics.reportsWritten == 1)
        }
    }

    @Test("cancelling the group's task ends run() the same way")
    func cancellation() async throws {
        try await withLoopThread("service-cancel") { directory, loop in
            let configuration = directory.configuration()
            let service = StallMonitorService { try loop.startMonitor(configuration) }
            let running = Task { try await service.run() }
            _ = try await waitForMonitor(of: service)
            _ = try loop.run { usleep(350_000) }
            running.cancel()
            try await running.value
            #expect(service.monitor == nil)
            #expect(try directory.reports().count == 1)
        }
    }

    @Test("a monitor that init(start:) cannot start makes run() throw its error")
    func startFailure() async throws {
        let service = StallMonitorService { throw StallMonitorError.unsupportedLoop("not here") }
        await #expect(throws: StallMonitorError.self) { try await service.run() }
        #expect(service.monitor == nil)
    }

    @Test("async flush and stop write what is queued and stop, from a task")
    func asyncFlushAndStop() async throws {
        try await withLoopThread("async-stop") { directory, loop in
            let monitor = try loop.startMonitor(directory.configuration())
            _ = try loop.run { usleep(350_000) }
            #expect(await monitor.flush(timeout: .seconds(10)))
            #expect(try directory.reports().count == 1)
            await monitor.stop()
            await monitor.stop()  // again: nothing
            let spans = monitor.statistics.spans
            _ = try loop.run { usleep(300_000) }
            #expect(monitor.statistics.spans == spans)
        }
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
