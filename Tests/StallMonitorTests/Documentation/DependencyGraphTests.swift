import Foundation
import StallReportKitTestSupport
import Testing

/// What an app that depends on StallMonitor resolves, as README's "Adding it to a package" says:
/// with the package traits off (`traits: []`) only swift-argument-parser, swift-log and
/// swift-metrics; with the default traits SwiftNIO and swift-service-lifecycle too. Measured with
/// `swift package show-dependencies` in an app made for the test, beside this repository's
/// dependencies (its `Package.resolved` is copied, so the pins already fetched are used).
@Suite("An app that turns StallMonitor's traits off resolves three packages besides it")
struct DependencyGraphTests {
    /// The packages README promises an app with `traits: []`.
    static let leanPackages: Set<String> = ["swift-argument-parser", "swift-log", "swift-metrics"]

    @Test("traits: [] resolves swift-argument-parser, swift-log and swift-metrics only")
    func traitsOff() throws {
        let packages = try Self.resolvedPackages(traits: "[]")
        #expect(packages == Self.leanPackages)
    }

    @Test("the default traits bring in SwiftNIO and swift-service-lifecycle")
    func defaultTraits() throws {
        let packages = try Self.resolvedPackages(traits: nil)
        #expect(packages.isSuperset(of: Self.leanPackages))
        #expect(packages.contains("swift-nio"))
        #expect(packages.contains("swift-service-lifecycle"))
    }

    /// The identities of every package an app that uses the `StallMonitor` product resolves,
    /// StallMonitor itself left out. `traits` is the dependency's `traits:` argument, or nil for none.
    static func resolvedPackages(traits: String?) throws -> Set<String> {
        let root = PackageRoot.url.standardizedFileURL
        let app = FileManager.default.temporaryDirectory.appendingPathComponent(
            "StallMonitorTests-app-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: app.appendingPathComponent("Sources/App"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: app) }
        let traitsArgument = traits.map { ", traits: \($0)" } ?? ""
        let manifest = """
            // swift-tools-version:6.1
            import PackageDescription
            let package = Package(
                name: "App",
                dependencies: [.package(path: "\(root.path)"\(traitsArgument))],
                targets: [.executableTarget(name: "App", dependencies: [
                    .product(name: "StallMonitor", package: "\(root.lastPathComponent)"),
                ])]
            )
            """
        try manifest.write(to: app.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        try "import StallMonitor\n".write(
            to: app.appendingPathComponent("Sources/App/main.swift"), atomically: true, encoding: .utf8)
        let pins = root.appendingPathComponent("Package.resolved")
        if FileManager.default.fileExists(atPath: pins.path) {
            try FileManager.default.copyItem(at: pins, to: app.appendingPathComponent("Package.resolved"))
        }

        // Resolving copies three checkouts from SwiftPM's cache: seconds, minutes on a loaded machine.
        let run = try runTool(
            ["swift", "package", "--package-path", app.path, "show-dependencies", "--format", "json"],
            timeout: .seconds(600))
        try #require(run.status == 0, "swift package show-dependencies: \(run.errors)")

        let graph = try JSONSerialization.jsonObject(with: Data(run.output.utf8))
        let stallMonitor = try #require(Self.dependencies(of: graph).first, "no StallMonitor in \(graph)")
        var identities = Set<String>()
        var pending = Self.dependencies(of: stallMonitor)
        while let package = pending.popLast() {
            if let identity = (package as? [String: Any])?["identity"] as? String { identities.insert(identity) }
            pending += Self.dependencies(of: package)
        }
        return identities
    }

    /// A node's `dependencies` in `show-dependencies --format json`.
    static func dependencies(of node: Any) -> [Any] {
        (node as? [String: Any])?["dependencies"] as? [Any] ?? []
    }
}
