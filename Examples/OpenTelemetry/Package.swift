// swift-tools-version:6.2
import Foundation
import PackageDescription

// SwiftPM names a package found by path after its directory: the clone's directory name.
let stallMonitor = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent()
    .deletingLastPathComponent().lastPathComponent

// A program whose stall monitor exports its metrics and report log records over OTLP/HTTP with
// swift-otel: its own package, so the library's graph never contains swift-otel.
// `Scripts/otel-demo` (at the repository root) builds it and checks what a receiver decoded.
let package = Package(
    name: "OpenTelemetryStallDemo",
    dependencies: [
        // StallMonitor without SwiftNIO's trait: the ServiceGroup member is all this program uses.
        .package(path: "../..", traits: ["ServiceLifecycle"]),
        // OTLP/HTTP only: the gRPC exporter's packages are never resolved.
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        .executableTarget(
            name: "otel-stall-demo",
            dependencies: [
                .product(name: "StallMonitor", package: stallMonitor),
                .product(name: "StallMonitorServiceLifecycle", package: stallMonitor),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ])
    ],
    swiftLanguageModes: [.v6]
)
