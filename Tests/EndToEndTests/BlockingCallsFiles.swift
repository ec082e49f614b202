import Foundation
import StallReportModel

/// The names of the blocking-calls reports in `directory`, in the order the directory lists them.
func blockingCallsReportNames(in directory: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory.path).filter(BlockingCallsReport.isFileName)
}

/// The call sites of the blocking-calls reports `names` (files in `directory`), report by report.
func blockingCallSites(_ names: [String], in directory: URL) throws -> [BlockingCallsReport.CallSite] {
    try names.flatMap { name in
        try BlockingCallsReport.read(path: directory.appendingPathComponent(name).path).get().callSites
    }
}
