import Foundation

/// One frame of a representative stack as shown in summaries: name and source location only.
public struct StackFrameSummary: Codable, Sendable, Equatable {
    /// Demangled symbol, or the address when the frame has no name.
    public var symbol: String
    /// Source file, when known.
    public var file: String?
    /// Source line, when known.
    public var line: Int?
    /// True for the app's own code.
    public var inApp: Bool

    /// Creates a frame summary.
    package init(symbol: String, file: String?, line: Int?, inApp: Bool) {
        self.symbol = symbol
        self.file = file
        self.line = line
        self.inApp = inApp
    }

    /// The same frame with control characters in its symbol and file escaped (``PrintableText``).
    package var printable: StackFrameSummary {
        StackFrameSummary(
            symbol: PrintableText.escape(symbol), file: file.map(PrintableText.escape), line: line, inApp: inApp)
    }

    /// `file:line`, `file`, or nil.
    public var location: String? {
        guard let file else { return nil }
        if let line { return "\(file):\(line)" }
        return file
    }

    /// `symbol` cut to at most `limit` characters, ending in `…` when cut: demangled Swift names
    /// can run to hundreds of characters, too wide for a table column.
    package static func abbreviated(_ symbol: String, limit: Int = 60) -> String {
        guard symbol.count > limit, limit > 1 else { return symbol }
        return String(symbol.prefix(limit - 1)) + "…"
    }

    /// `text` cut in the middle to at most `limit` characters (`/a/b/…/File.swift:12`), keeping
    /// its end, where a source location's file name and line are.
    package static func middleAbbreviated(_ text: String, limit: Int) -> String {
        guard text.count > limit, limit > 2 else { return text }
        let tail = (limit - 1) * 2 / 3
        return String(text.prefix(limit - 1 - tail)) + "…" + String(text.suffix(tail))
    }

    /// How many frames a summary keeps.
    package static let defaultLimit = 5

    /// The app's async callers a summary shows for `report`: the in-app frames of its
    /// representative async callers (thunks left out), innermost first, at most `limit`.
    package static func asyncCallers(of report: StallReport, limit: Int = defaultLimit) -> [StackFrameSummary] {
        let frames = (report.representativeAsyncCallers ?? []).compactMap { index -> StallReport.Frame? in
            guard report.frames.indices.contains(index) else { return nil }
            let frame = report.frames[index]
            guard frame.inApp, !(frame.symbol.map(AsyncCallerNames.isThunk) ?? false) else { return nil }
            return frame
        }
        return frames.prefix(limit).map { frame in
            StackFrameSummary(
                symbol: frame.symbol.flatMap { $0.isEmpty ? nil : $0 } ?? frame.address, file: frame.file,
                line: frame.line, inApp: true)
        }
    }

    /// The frames a summary shows for `report`: from its representative stack (leaf first), the
    /// app's own frames when there are any, otherwise the top frames. Invalid indices are skipped.
    package static func representative(of report: StallReport, limit: Int = defaultLimit) -> [StackFrameSummary] {
        let frames = report.representativeStack.compactMap { index -> StallReport.Frame? in
            report.frames.indices.contains(index) ? report.frames[index] : nil
        }
        let app = frames.filter(\.inApp)
        let chosen = (app.isEmpty ? frames : app).prefix(limit)
        return chosen.map { frame in
            let name = frame.symbol.flatMap { $0.isEmpty ? nil : $0 } ?? frame.address
            return StackFrameSummary(symbol: name, file: frame.file, line: frame.line, inApp: frame.inApp)
        }
    }
}
