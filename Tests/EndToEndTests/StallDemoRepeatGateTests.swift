import Foundation
import StallReportKit
import Testing

/// The same stalls give the same fingerprints run after run: a second run of the real demo passes
/// the gate against a baseline made from the first (the shared viz run).
@Suite("stall-demo run twice: the gate passes against the first run's baseline")
struct StallDemoRepeatGateTests {
    @Test("baseline from run 1, gate run 2: no new or regressed fingerprint")
    func secondRunPassesTheGate() throws {
        let first = try VizDemo.run()
        let second = FileManager.default.temporaryDirectory.appendingPathComponent(
            "stall-demo-repeat-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: second, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: second) }
        let demo = try StallReportCLI.run(
            ["--output", second.path, "--threshold-ms", "250"], timeout: 120, executable: "stall-demo")
        try #require(demo.status == 0, "\(demo)")

        let baseline = second.appendingPathComponent("baseline.json.txt")
        let made = try StallReportCLI.run(["baseline", first.directory.path, "-o", baseline.path])
        try #require(made.status == 0, "\(made)")
        // The claim is about fingerprints and counts, not durations: a 1.2 s spin measured 1.5 s on a
        // loaded CI machine (+27 %, over the default 25 % tolerance). A wide tolerance keeps the
        // duration check from deciding; counts are compared exactly below.
        let gate = try StallReportCLI.run(["gate", "--baseline", baseline.path, "--tolerance", "4", second.path])
        #expect(gate.status == 0, "\(gate)")

        // Every stall of the second run has a fingerprint the first run had.
        let firstPrints = Set(first.reports.map(\.report.fingerprint))
        let files = try FileManager.default.contentsOfDirectory(atPath: second.path).filter { $0.hasSuffix(".json") }
        let secondReports = try files.map { try StallReport.read(from: second.appendingPathComponent($0)) }
        let secondPrints = Set(secondReports.map(\.fingerprint))
        #expect(secondPrints == firstPrints, "first \(firstPrints.sorted()), second \(secondPrints.sorted())")
        // And each fingerprint occurs as often in both runs; except that a congestion stall may be
        // split in two by a preemption longer than the re-entry grace between two of its passes
        // (a loaded machine, a sanitizer build): it must occur in both.
        func counts(_ reports: [StallReport]) -> [String: Int] {
            Dictionary(reports.map { ($0.fingerprint, $0.classification == .congestion ? 0 : 1) }, uniquingKeysWith: +)
        }
        #expect(counts(secondReports) == counts(first.reports.map(\.report)))
    }
}
