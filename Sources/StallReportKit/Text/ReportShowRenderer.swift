import Foundation

/// Renders one report as text, like a crash log: the facts of the stall, the representative stack
/// (numbered, leaf first: image, address, symbol + offset, file:line) and the call tree of all
/// samples (``CallTreeTextRenderer``). App frames are highlighted when ``style`` has colours.
package struct ReportShowRenderer: Sendable {
    /// How the call tree is drawn; its colours, name style and width are the whole text's.
    package var tree: CallTreeTextRenderer
    /// Colours, or none.
    package var style: TextStyle { tree.style }
    /// How frame names are shown: simplified (default) or full.
    package var names: FrameNameStyle { tree.names }
    /// Width every line fits in, in characters (names, image names and paths shortened, long
    /// fact lines broken between list items, never inside a word), or nil for no limit.
    package var width: Int? { tree.width }

    /// Creates a renderer.
    package init(
        style: TextStyle = .plain, minPercent: Double = CallTreeTextRenderer.defaultMinPercent,
        names: FrameNameStyle = .simplified,
        width: Int? = nil
    ) {
        tree = CallTreeTextRenderer(style: style, minPercent: minPercent, names: names, width: width)
    }

    /// The full text, ending with a newline. Control characters in the report's strings and in
    /// `path` are shown escaped (``PrintableText``).
    package func render(_ report: StallReport, path: String) -> String {
        let report = report.printable
        let path = PrintableText.escape(path)
        var out = header(report, path: path)
        out.append("")
        out.append(style.bold("Representative stack (leaf first):"))
        out += stack(report)
        let callers = asyncCallers(report)
        if !callers.isEmpty {
            out.append("")
            out.append(
                style.bold(
                    "Async callers (innermost first; the functions that awaited it, from the task's async contexts):"))
            out += callers
        }
        out.append("")
        let callTree = CallTree(report: report, minPercent: tree.minPercent)
        out.append(
            style.bold(
                "Call tree of all \(callTree.sampleCount) sample\(callTree.sampleCount == 1 ? "" : "s") (\(Durations.format(callTree.totalMs)) sampled; heaviest path first):"
            ))
        out += tree.render(callTree)
        let lines =
            width.map { width in
                out.flatMap { LineFitting.fit($0, width: width, continuation: String(repeating: " ", count: 18)) }
            } ?? out
        return lines.joined(separator: "\n") + "\n"
    }

    /// The facts of the stall, one per line.
    package func header(_ report: StallReport, path: String) -> [String] {
        var lines: [String] = []
        let title =
            "Stall of \(Durations.format(report.durationMs)) on thread \(report.loop.threadName) (\(report.classification.rawValue), \(report.status.rawValue))"
        lines.append(style.bold(report.status == .ended ? title : style.red(title)))
        func row(_ key: String, _ value: String) {
            lines.append("  " + key.padding(toLength: 16, withPad: " ", startingAt: 0) + value)
        }
        row("report", width.map { StackFrameSummary.middleAbbreviated(path, limit: max(16, $0 - 18)) } ?? path)
        row("id", report.id)
        row("fingerprint", style.cyan(report.fingerprint))
        row("started", ReportCoding.formatDate(report.startedAt))
        row("duration", String(format: "%.1f ms (threshold %.0f ms)", report.durationMs, report.thresholdMs))
        let share =
            report.cpuObservedMs > 0
            ? String(format: " (%.0f %%)", report.mainThreadCPUMs / report.cpuObservedMs * 100) : ""
        row(
            "classification",
            "\(report.classification.rawValue): thread CPU time \(String(format: "%.1f", report.mainThreadCPUMs)) ms of \(String(format: "%.1f", report.cpuObservedMs)) ms observed\(share)"
        )
        let loop = report.loop
        row("thread", "\(loop.threadName), tid \(loop.threadID)\(loop.isMainThread ? ", main thread" : "")")
        // A run loop mode is a RunLoop's notion: other loops' reports have none to show.
        let mode = loop.mode.map { ", mode \($0)" } ?? (loop.kind == "runLoop" ? ", mode unknown" : "")
        row(
            "loop",
            "\(loop.kind)\(mode), \(loop.passes) pass\(loop.passes == 1 ? "" : "es"), longest \(String(format: "%.1f", loop.longestPassMs)) ms"
        )
        let process = report.process
        row(
            "process",
            "\(process.executableName) pid \(process.pid)\(process.appVersion.map { ", version \($0)" } ?? "") on \(process.hostName), \(process.os) \(process.osVersion) \(process.architecture)"
        )
        row("samples", samplingLine(report.sampling, kept: report.samples.count))
        if let note = report.sampling.unwinderNote { row("", note) }
        if let note = report.sampling.asyncCallersNote { row("async callers", note) }
        row("symbolication", report.symbolication.symbolicator + (report.symbolication.note.map { " (\($0))" } ?? ""))
        return lines
    }

    /// `N taken of M attempted, …` with the reasons for skipped samples.
    func samplingLine(_ sampling: StallReport.Sampling, kept: Int) -> String {
        var parts = ["\(sampling.taken) taken of \(sampling.attempted) attempted", "\(sampling.timedOut) timed out"]
        let skipped = sampling.skipped.values.saturatingSum()
        if skipped > 0 {
            let reasons = sampling.skipped.keys.sorted().map { "\($0) \(sampling.skipped[$0]!)" }.joined(
                separator: ", ")
            parts.append("\(skipped) skipped (\(reasons))")
        } else {
            parts.append("0 skipped")
        }
        parts.append("\(kept) kept")
        var line = parts.joined(separator: ", ")
        line += String(format: "; every %g ms", sampling.intervalMs)
        if sampling.effectiveIntervalMs != sampling.intervalMs {
            line += String(format: ", %g ms per kept sample", sampling.effectiveIntervalMs)
        }
        if sampling.thinned { line += "; thinned to \(sampling.maxSamples), \(sampling.dropped) dropped" }
        line += "; unwinder \(sampling.unwinder)"
        return line
    }

    /// The representative stack as numbered crash-log lines, then the monitor's own frames the
    /// samples passed through (left out of the stack and the fingerprint), when there are any.
    package func stack(_ report: StallReport) -> [String] {
        let frames = report.representativeStack.compactMap {
            report.frames.indices.contains($0) ? report.frames[$0] : nil
        }
        let own = monitorFrameNames(report)
        let ownLine =
            own.isEmpty ? [] : [style.dim("  (left out: StallMonitor's own frames \(own.joined(separator: ", ")))")]
        guard !frames.isEmpty else { return ["  (no stack: \(noStackReason(report)))"] + ownLine }
        return lines(frames, in: report) + ownLine
    }

    /// The distinct names of the monitor's own frames that samples of `report` pass through.
    private func monitorFrameNames(_ report: StallReport) -> [String] {
        let used = Set(report.samples.lazy.flatMap { $0.frameIndices })
        let found = report.frames.indices.filter { report.frames[$0].isMonitorCode && used.contains($0) }.map { index in
            report.frames[index].symbol.flatMap { $0.isEmpty ? nil : names.display($0) } ?? report.frames[index].address
        }
        var seen: Set<String> = []
        return found.filter { seen.insert($0).inserted }
    }

    /// The representative async callers (``StallReport/representativeAsyncCallers``) as numbered
    /// lines like the stack's (each the entry of the caller's resume function, so no offset is
    /// meaningful); empty when the report has none.
    package func asyncCallers(_ report: StallReport) -> [String] {
        let frames = (report.representativeAsyncCallers ?? []).compactMap {
            report.frames.indices.contains($0) ? report.frames[$0] : nil
        }
        return frames.isEmpty ? [] : lines(frames, in: report)
    }

    private func lines(_ frames: [StallReport.Frame], in report: StallReport) -> [String] {
        let images = frames.map { frame -> String in
            frame.image.flatMap {
                report.images.indices.contains($0) ? (report.images[$0].path as NSString).lastPathComponent : nil
            } ?? "???"
        }
        // On a narrow terminal image names get a sixth of the width (cut in the middle).
        let imageLimit = width.map { min(32, max(8, $0 / 6)) } ?? 32
        let imageWidth = min(imageLimit, images.map(\.count).max() ?? 0)
        let numberWidth = String(frames.count - 1).count
        return frames.enumerated().map { index, frame in
            let number = String(index).padding(toLength: numberWidth, withPad: " ", startingAt: 0)
            let imageName =
                width == nil ? images[index] : StackFrameSummary.middleAbbreviated(images[index], limit: imageLimit)
            let image = imageName.padding(toLength: max(imageWidth, imageName.count), withPad: " ", startingAt: 0)
            var name = frame.symbol.flatMap { $0.isEmpty ? nil : names.display($0) } ?? "???"
            if let offset = frame.offset { name += " + \(offset)" }
            let start = "  \(number)  \(image)  \(frame.address)  "
            var location = frame.file.map { file in frame.line.map { "\(file):\($0)" } ?? file }
            if let width {
                (name, location) = LineFitting.shortened(name: name, location: location, width: width - start.count)
            }
            var line = start + (frame.inApp ? style.bold(style.cyan(name)) : name)
            if let location { line += "  " + style.dim(location) }
            return line
        }
    }

    private func noStackReason(_ report: StallReport) -> String {
        if let note = report.samples.first(where: { $0.note != nil })?.note { return note }
        if let note = report.sampling.unwinderNote { return note }
        return "no sample had a stack"
    }
}
