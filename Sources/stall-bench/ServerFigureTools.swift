import Foundation
import StallReportModel
import ToolSupport

/// What the two real-server figures (11: nio-stall-demo, 13: hummingbird-stall-demo) do alike.
enum ServerFigureTools {
    /// Throws unless wrk and curl are installed.
    static func requireWrkAndCurl() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/wrk"),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")
        else {
            throw BenchError("wrk and curl are needed (Scripts/setup installs them)")
        }
    }

    /// Runs `wrk -t2 -c32 -d<seconds>s` on `url`.
    static func wrk(_ url: String, seconds: Int, scratch: URL) throws -> Subprocess.Run {
        try Subprocess.run("/usr/bin/wrk", ["-t2", "-c32", "-d\(seconds)s", url], scratch: scratch)
    }

    /// The `stall-*.json` reports a server wrote to `directory`, in file name order.
    static func reports(in directory: URL) throws -> [StallReport] {
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasPrefix("stall-") && $0.hasSuffix(".json") }.sorted()
        return try files.map { try StallReport.read(from: directory.appendingPathComponent($0)) }
    }

    /// Asks a server for `count` stalls of 300–800 ms (lengths from a generator seeded with
    /// `seed`), 150 ms apart: `get(index, ms)` sends request `index` and returns its body, which
    /// ends "took <ms>" and then `suffix`, or `suffix` and a note of how the handler's thread was
    /// disturbed (`took 684.006 ms (preempted)`). The durations the handlers measured, in milliseconds.
    static func requestStalls(
        count: Int, seed: UInt64, suffix: String, get: (_ index: Int, _ ms: Int) throws -> String
    ) throws -> [Double] {
        var generator = SplitMix64(seed: seed)
        var measured: [Double] = []
        for index in 0..<count {
            let ms = 300 + Int(generator.next() % 501)
            let body = try get(index, ms)
            guard
                let took = body.components(separatedBy: "took ").last.flatMap({
                    Double(
                        $0.components(separatedBy: suffix.trimmingCharacters(in: .whitespacesAndNewlines))[0]
                            .trimmingCharacters(in: .whitespacesAndNewlines))
                })
            else {
                throw BenchError("unexpected answer: \(body)")
            }
            measured.append(took)
            usleep(150_000)
        }
        return measured
    }

    /// The row of time from sampling due (half the threshold into a stall) to the first sample,
    /// over those of `reports` that kept samples: `which` says which reports, `series` the requests.
    static func firstSampleRow(
        _ figure: String, _ name: String, reports: [StallReport], which: String, series: String
    ) -> ResultRow {
        let due = reports.compactMap { report in report.samples.first.map { $0.offsetMs - report.thresholdMs * 0.5 } }
        return ResultRow(
            figure, name, value: DetectionLatencyFigure.summary(due),
            goal: "stated (a look every pollInterval, then one sampling interval)", verdict: .info,
            method:
                "samples[0].offsetMs − threshold × samplingLead over the reports with samples (\(which)); \(series)",
            data: DetectionLatencyFigure.stats(due))
    }
}
