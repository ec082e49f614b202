// swift-tools-version:6.1
import Foundation
import PackageDescription

// SwiftPM names a package found by path after its directory: the clone's directory name.
let stallMonitor = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent()
    .deletingLastPathComponent().lastPathComponent

// A Hummingbird 2 server watched by StallMonitor: its own package, so the library's graph never
// contains Hummingbird. `Scripts/hummingbird-demo` (at the repository root) builds and drives it.
let package = Package(
    name: "HummingbirdStallDemo",
    products: [
        // Preloaded by stall-bench when it counts the server's instructions under valgrind 3.19,
        // which cannot run an `async main` program without it (see its source).
        .library(name: "ValgrindSigsuspendCopy", type: .dynamic, targets: ["ValgrindSigsuspendCopy"])
    ],
    dependencies: [
        .package(path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    ],
    targets: [
        .executableTarget(
            name: "hummingbird-stall-demo",
            dependencies: [
                .product(name: "StallMonitor", package: stallMonitor),
                .product(name: "StallMonitorNIO", package: stallMonitor),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]),
        .target(name: "ValgrindSigsuspendCopy"),
    ],
    swiftLanguageModes: [.v6]
)
