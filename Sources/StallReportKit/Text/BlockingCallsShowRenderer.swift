import Foundation
import StallReportModel

/// `stallreport show` of a blocking-calls report: its facts, then each call site (most blocked
/// time first) with its count, total, maximum, thread kind and the stack of its first call,
/// caller first, numbered like a crash log, then the async functions awaiting it.
package struct BlockingCallsShowRenderer: Sendable {
    /// Colours, or none.
    package var style: TextStyle
    /// How frame names are shown.
    package var names: FrameNameStyle

    /// Creates a renderer.
    package init(style: TextStyle = .plain, names: FrameNameStyle = .simplified) {
        self.style = style
        self.names = names
    }

    /// The text, ending with a newline.
    package func render(_ report: BlockingCallsReport, path: String) -> String {
        let calls = report.callSites.reduce(0) { $0 + $1.count }
        let total = report.callSites.reduce(0) { $0 + $1.totalMs }
        var out = [
            style.bold("Blocking calls") + "  \(PrintableText.escape(path))",
            "interval:   \(ReportCoding.formatDate(report.startedAt)), \(Durations.format(report.intervalMs)); threshold \(Durations.format(report.thresholdMs))",
            "process:    \(PrintableText.escape(report.process.executableName)) (pid \(report.process.pid)) on \(PrintableText.escape(report.process.hostName))",
            "calls:      \(calls) in \(report.callSites.count) call site\(report.callSites.count == 1 ? "" : "s"), blocked \(Durations.format(total))"
                + (report.omittedCallSites > 0 ? "; \(report.omittedCallSites) call sites left out" : "")
                + (report.droppedCalls > 0 ? "; \(report.droppedCalls) calls dropped (record slots full)" : ""),
        ]
        for (index, site) in report.callSites.enumerated() {
            out.append("")
            out.append(
                style.bold("#\(index + 1) \(PrintableText.escape(site.call))")
                    + " on \(PrintableText.escape(site.loopKind))  "
                    + style.cyan(PrintableText.escape(site.fingerprint)))
            out.append(
                "    \(site.count) call\(site.count == 1 ? "" : "s"), total \(Durations.format(site.totalMs)), max \(Durations.format(site.maxMs)); threads "
                    + site.threads.map(String.init).joined(separator: ", "))
            if let callSite = site.callSite {
                out.append("    call site: \(names.display(PrintableText.escape(callSite)))")
            }
            out += lines(site.stack)
            if let callers = site.asyncCallers, !callers.isEmpty {
                out.append(
                    "    awaited by" + (site.asyncCallersFromJobStart == true ? " (read from the job's start)" : "")
                        + ":")
                out += lines(callers)
                if site.asyncCallersReachRoot == false { out.append("    … (outer callers not read)") }
            }
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// Frames numbered from 0 (a stack, or its async callers, as `show` numbers a stall's), each
    /// with its address, name and source line; the numbers padded so that the addresses align.
    private func lines(_ frames: [BlockingCallsReport.Frame]) -> [String] {
        let numberWidth = String(max(frames.count - 1, 0)).count
        return frames.enumerated().map { number, frame in
            var line =
                "    \(String(number).padding(toLength: numberWidth, withPad: " ", startingAt: 0))  "
                + "\(PrintableText.escape(frame.address))  "
                + (frame.symbol.map { names.display(PrintableText.escape($0)) } ?? "?")
            if let file = frame.file {
                line += style.dim(" (\(PrintableText.escape(file))\(frame.line.map { ":\($0)" } ?? ""))")
            }
            return line
        }
    }
}
