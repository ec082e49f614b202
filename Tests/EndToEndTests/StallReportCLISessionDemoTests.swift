import Foundation
import StallReportKit
import Testing

@Suite("stallreport on the real stall-demo's session record")
struct StallReportCLISessionDemoTests {
    @Test("The demo writes one session record that validates, decodes, and gives summarize a stall rate")
    func demoSession() throws {
        let demo = try VizDemo.run()
        let names = try FileManager.default.contentsOfDirectory(atPath: demo.directory.path).filter {
            $0.hasSuffix(".session")
        }
        #expect(names.count == 1, "\(names)")
        let name = try #require(names.first)
        #expect(name.hasPrefix("session-") && name.contains("-p"))
        try SchemaValidation.validate(
            schema: "stall-session.schema.json", files: demo.directory.path + "/*.session", expected: 1)
        let record = try SessionRecord.decode(from: Data(contentsOf: demo.directory.appendingPathComponent(name)))
        #expect(record.cleanStop)
        #expect(record.monitoredMs > 0)
        #expect(record.stalls >= demo.reports.count)

        let object = try StallReportCLI.jsonSummary(of: demo.directory.path)
        let sessions = try #require(object["sessions"] as? [String: Any])
        #expect(sessions["sessions"] as? Int == 1)
        #expect(sessions["cleanlyStopped"] as? Int == 1)
        #expect(sessions["endedUncleanly"] as? Int == 0)
        #expect(sessions["stallsWithoutSession"] as? Int == 0)
        #expect(sessions["monitoredMs"] as? Double == record.monitoredMs)
        let stalls = try #require((object["totals"] as? [String: Any])?["stalls"] as? Int)
        let perHour = try #require(sessions["stallsPerHour"] as? Double)
        #expect(abs(perHour - Double(stalls) / (record.monitoredMs / 3_600_000)) < 1e-6 * perHour)

        let text = try StallReportCLI.run(["summarize", demo.directory.path])
        #expect(text.stdoutLines.contains { $0.hasPrefix("stall rate: ") }, "\(text)")
        // Wrapped to fit 120 columns.
        #expect(text.stdout.contains("1 stopped cleanly,\n  0 ended without a clean stop"), "\(text)")
        #expect(text.stdoutLines.contains { $0.hasPrefix("sessions: 1, ") }, "\(text)")
    }
}
