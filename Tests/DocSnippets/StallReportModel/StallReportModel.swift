// The snippets of Sources/StallReportModel/StallReportModel.docc/StallReportModel.md, compiled. Markers and wrapping:
// DocSnippetsTests.

// snippet: Sources/StallReportModel/StallReportModel.docc/StallReportModel.md
import Foundation
import StallReportModel
// snippet: pause

/// The report-reading program (top-level code in a `main.swift`), as a function's body.
func stallReportModelReadingProgram() throws {
    // snippet: resume
    let report = try StallReport.read(from: URL(fileURLWithPath: "stall-reports/stall-….json"))
    print(report.durationMs, report.classification, report.fingerprint)
    // snippet: end
}
