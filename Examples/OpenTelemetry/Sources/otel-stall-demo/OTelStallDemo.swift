// snippet: Sources/StallMonitor/StallMonitor.docc/OpenTelemetry.md
import Foundation
import Logging
import OTel
import ServiceLifecycle
import StallMonitor
import StallMonitorServiceLifecycle

// snippet: pause
/// A program whose stall monitor's metrics and report log records go to an OpenTelemetry
/// collector over OTLP/HTTP (swift-otel). It runs a `ServiceGroup` of three services: swift-otel's
/// exporters, the monitor, and ``StallingWork`` (two stalls, then it returns and the group shuts
/// down gracefully: the monitor writes its last reports and metrics, then swift-otel exports
/// them). The collector's address comes from `OTEL_EXPORTER_OTLP_ENDPOINT` (default
/// `http://localhost:4318`), as swift-otel reads it.
///
///     otel-stall-demo [<report-directory>]     (default: stall-reports)
@main
// snippet: resume
struct OTelStallDemo {
    static func main() async throws {
        // swift-otel becomes the process's logging and metrics backend (no traces here).
        var otel = OTel.Configuration.default
        otel.serviceName = "otel-stall-demo"
        otel.traces.enabled = false
        let observability = try OTel.bootstrap(configuration: otel)

        // The monitor's metrics go to MetricsSystem.factory, which swift-otel bootstrapped, and its
        // log records (one per report written) to swift-otel's log handler.
        let reports = URL(fileURLWithPath: CommandLine.arguments.dropFirst().first ?? "stall-reports")
        let configuration = StallMonitor.Configuration(reportDirectory: reports, logger: Logger(label: "StallMonitor"))
        let stalls = try StallMonitorService(configuration)
        let app = StallingWork(stalls: stalls)  // your services (here: two stalls, then it returns)

        // swift-otel first: it starts first and stops last, after the monitor's last reports.
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: observability),
                    .init(service: stalls),
                    .init(service: app, successTerminationBehavior: .gracefullyShutdownGroup),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: Logger(label: "app")))
        try await group.run()
    }
}
// snippet: end
