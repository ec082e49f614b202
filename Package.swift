// swift-tools-version:6.1
import PackageDescription

// The products of dependencies that targets use, each named once.
let argumentParser: Target.Dependency = .product(name: "ArgumentParser", package: "swift-argument-parser")
let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")
let metrics: Target.Dependency = .product(name: "Metrics", package: "swift-metrics")
let metricsTestKit: Target.Dependency = .product(name: "MetricsTestKit", package: "swift-metrics")
let nioCore: Target.Dependency = .product(name: "NIOCore", package: "swift-nio")
let nioPosix: Target.Dependency = .product(name: "NIOPosix", package: "swift-nio")
let nioHTTP1: Target.Dependency = .product(name: "NIOHTTP1", package: "swift-nio")
let serviceLifecycle: Target.Dependency = .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
// The integration products' dependencies: only with their trait on (see `traits`).
let nioCoreWithTrait: Target.Dependency = .product(
    name: "NIOCore", package: "swift-nio", condition: .when(traits: ["NIO"]))
let nioPosixWithTrait: Target.Dependency = .product(
    name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["NIO"]))
let serviceLifecycleWithTrait: Target.Dependency =
    .product(
        name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["ServiceLifecycle"]))
let prometheus: Target.Dependency = .product(name: "Prometheus", package: "swift-prometheus")

let package = Package(
    name: "StallMonitor",
    products: [
        .library(name: "StallMonitor", targets: ["StallMonitor"]),
        .library(name: "StallReportModel", targets: ["StallReportModel"]),
        .library(name: "StallReportKit", targets: ["StallReportKit"]),
        // SwiftNIO event loops: only apps that use this product build SwiftNIO.
        .library(name: "StallMonitorNIO", targets: ["StallMonitorNIO"]),
        // A monitor as a swift-service-lifecycle Service (a ServiceGroup's member).
        .library(name: "StallMonitorServiceLifecycle", targets: ["StallMonitorServiceLifecycle"]),
        // Tests that fail on stalls: a Swift Testing trait, and an XCTest helper (each its own product).
        .library(name: "StallMonitorTesting", targets: ["StallMonitorTesting"]),
        .library(name: "StallMonitorXCTest", targets: ["StallMonitorXCTest"]),
        .executable(name: "stallreport", targets: ["stallreport"]),
        // The demos, hosts and benchmarks below are executable targets, not products: `swift run` and
        // `swift build --product` name them in this package, and an app that depends on this package
        // never resolves what only they use (swift-prometheus). SwiftPM resolves the dependencies of
        // every product of a dependency, used or not (unless a disabled trait guards every use, see
        // `traits`), but not those of its other targets.
    ],
    // The integrations' dependencies, each behind a trait that is on by default. An app that
    // depends on StallMonitor with `traits: []` resolves neither SwiftNIO (and its three) nor
    // swift-service-lifecycle (and its two): three packages besides this one, not nine
    // (DependencyGraphTests). The products that need a trait say so when built without it.
    traits: [
        .trait(name: "NIO", description: "StallMonitorNIO: watches SwiftNIO event loops (brings in swift-nio)."),
        .trait(
            name: "ServiceLifecycle",
            description:
                "StallMonitorServiceLifecycle: a monitor as a ServiceGroup member (brings in swift-service-lifecycle)."),
        .default(enabledTraits: ["NIO", "ServiceLifecycle"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // Metrics (the API) for the library; MetricsTestKit's counterTotal (2.13) for the tests.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        // Only stall-demo's --prometheus uses it (never the StallMonitor library); stall-demo is no
        // product, so apps that depend on this package never fetch it.
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
    ],
    targets: [
        // C shim: signal handler, libunwind and libdw loaded with dlopen, image list, thread helpers.
        .target(
            name: "CStallMonitor",
            cSettings: [.define("_GNU_SOURCE")],
            linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("pthread")]
        ),
        // The report and session model, its coding and fingerprint, atomic writing and bounded
        // reading: all a host needs to write reports. Foundation only.
        .target(name: "StallReportModel"),
        // Everything that reads reports: summaries, gates, diffs, exports, symbolication. Foundation and zlib.
        .target(name: "StallReportKit", dependencies: ["StallReportModel", "CStallMonitorZlib"]),
        // zlib (deflate with a gzip wrapper) for the pprof export; needs zlib1g-dev.
        .systemLibrary(name: "CStallMonitorZlib"),
        // The library host apps link.
        .target(name: "StallMonitor", dependencies: ["CStallMonitor", "StallReportModel", logging, metrics]),
        // Watches every event loop of a SwiftNIO EventLoopGroup (a pull probe of the core).
        .target(name: "StallMonitorNIO", dependencies: ["StallMonitor", nioCoreWithTrait, nioPosixWithTrait]),
        // StallMonitorService: run()/graceful shutdown of a ServiceGroup.
        .target(name: "StallMonitorServiceLifecycle", dependencies: ["StallMonitor", serviceLifecycleWithTrait]),
        // A test's stall budget (scope, watches, violations) shared by the two test integrations.
        .target(name: "StallBudgetCore", dependencies: ["StallMonitor", logging]),
        // `@Test(.stallBudget(.milliseconds(100)))`: a Swift Testing trait.
        .target(name: "StallMonitorTesting", dependencies: ["StallBudgetCore", "StallMonitor", logging]),
        // `assertNoStalls(budget:) { … }`: the XCTestCase helper.
        .target(name: "StallMonitorXCTest", dependencies: ["StallBudgetCore", "StallMonitor", logging]),
        // A plain SwiftNIO HTTP server whose routes stall in known ways (Scripts/nio-demo).
        .executableTarget(
            name: "nio-stall-demo",
            dependencies: [
                "StallMonitor", "StallMonitorNIO", "ToolSupport", nioCore, nioPosix, nioHTTP1, argumentParser, logging,
            ]),
        .executableTarget(name: "stallreport", dependencies: ["StallReportModel", "StallReportKit", argumentParser]),
        .executableTarget(
            name: "stall-demo",
            dependencies: ["StallMonitor", "StallReportModel", argumentParser, logging, metrics, prometheus]),
        // The same work on the main RunLoop directly and through an IdleWorkQueue (Scripts/demo).
        .executableTarget(
            name: "idle-work-demo", dependencies: ["StallMonitor", "StallReportModel", argumentParser, logging]),
        // A host with `async main` (no main RunLoop): what the monitor says there (tests, README).
        .executableTarget(name: "async-main-host", dependencies: ["StallMonitor", logging]),
        // A host whose tasks stall the Swift concurrency pool in known ways (tests, README).
        .executableTarget(name: "pool-stall-host", dependencies: ["StallMonitor", "ToolSupport", logging]),
        // A host that forks while it runs a monitor: the child's own monitor must work (tests).
        .executableTarget(name: "fork-host", dependencies: ["StallMonitor"]),
        // Runs a program where chosen system calls fail, as a hardened container's seccomp profile makes them (tests).
        .executableTarget(name: "seccomp-run", dependencies: ["CStallMonitor"]),
        // What the benchmarks, the stress run and the tests share (a seeded generator, a child process's
        // output through files, a filter run over pipes); not a product.
        .target(name: "ToolSupport"),
        // Benchmarks of the monitor's cost and accuracy and of stallreport's speed (Scripts/bench).
        .executableTarget(
            name: "stall-bench",
            dependencies: [
                "StallMonitor", "StallReportModel", "StallReportKit", "ToolSupport", argumentParser, logging,
            ]),
        // Stress run: thousands of stalls across several monitored threads (Scripts/stress).
        .executableTarget(
            name: "stall-stress",
            dependencies: [
                "StallMonitor", "StallReportModel", "StallReportKit", "ToolSupport", argumentParser, logging,
            ]),
        // Every ```swift snippet of README.md and the DocC catalogs that is not marked a fragment, copied
        // verbatim, so the build compiles it (DocSnippetsTests, in StallMonitorTests, keeps the copies
        // equal to the docs). `swift build` builds it; nothing links it, or its @Test snippets would run.
        .target(
            name: "DocSnippets",
            dependencies: [
                "StallMonitor", "StallMonitorNIO", "StallMonitorServiceLifecycle", "StallMonitorTesting",
                "StallMonitorXCTest",
                "StallReportModel", logging, metrics, nioPosix, serviceLifecycle,
            ],
            path: "Tests/DocSnippets"),
        // Fixtures and helpers shared by the test targets (not a product).
        .target(name: "StallReportKitTestSupport", dependencies: ["StallReportModel", "StallReportKit"]),
        .testTarget(
            name: "StallReportKitTests",
            dependencies: ["StallReportModel", "StallReportKit", "StallReportKitTestSupport", "ToolSupport"]),
        .testTarget(
            name: "StallMonitorTests",
            dependencies: [
                "StallMonitor", "StallReportModel", "StallReportKit", "StallReportKitTestSupport",
                "ToolSupport", "StallMonitorServiceLifecycle", serviceLifecycle, metrics, metricsTestKit,
            ]),
        .testTarget(
            name: "StallMonitorNIOTests",
            dependencies: [
                "StallMonitor", "StallMonitorNIO", "StallReportModel",
                metricsTestKit, nioCore, nioPosix, nioHTTP1,
            ]),
        .testTarget(
            name: "StallMonitorTestingTests",
            dependencies: [
                "StallMonitorTesting", "StallMonitorNIO", "StallReportKitTestSupport", nioCore, nioPosix, logging,
            ]),
        .testTarget(name: "StallMonitorXCTestTests", dependencies: ["StallMonitorXCTest"]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "StallReportModel", "StallReportKit", "StallReportKitTestSupport", "ToolSupport",
                "stall-demo", "stallreport", "idle-work-demo", "nio-stall-demo", "async-main-host", "pool-stall-host",
                "fork-host", "seccomp-run",
            ]),
    ],
    swiftLanguageModes: [.v6]
)

// API documentation (DocC): `Scripts/docs` sets STALLMONITOR_DOCS=1, which adds swift-docc-plugin
// for `swift package generate-documentation`. Builds, tests and CI never resolve it, and apps that
// depend on StallMonitor never fetch it.
if Context.environment["STALLMONITOR_DOCS"] != nil {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"))
}
