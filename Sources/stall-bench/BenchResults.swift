import Foundation

/// Whether a row meets its goal.
enum Verdict: String, Codable, Sendable {
    case pass
    case fail
    /// A figure that is stated, not judged (e.g. report sizes, absolute times).
    case info
}

/// One line of the results table.
struct ResultRow: Codable, Sendable {
    /// Figure number and part, e.g. `1a`.
    var figure: String
    /// What the row measures.
    var name: String
    /// The measured value, formatted for people.
    var value: String
    /// The goal, formatted for people.
    var goal: String
    var verdict: Verdict
    /// How it was measured (one sentence).
    var method: String
    /// The raw numbers behind the row.
    var data: [String: Double]

    init(
        _ figure: String, _ name: String, value: String, goal: String, verdict: Verdict, method: String,
        data: [String: Double] = [:]
    ) {
        self.figure = figure
        self.name = name
        self.value = value
        self.goal = goal
        self.verdict = verdict
        self.method = method
        self.data = data
    }

    /// A judged row: passes when `ok`.
    static func judged(
        _ figure: String, _ name: String, value: String, goal: String, ok: Bool, method: String,
        data: [String: Double] = [:]
    ) -> ResultRow {
        ResultRow(figure, name, value: value, goal: goal, verdict: ok ? .pass : .fail, method: method, data: data)
    }
}

/// The rows of one figure.
struct FigureResult: Codable, Sendable {
    var figure: FigureKind
    var title: String
    var rows: [ResultRow]
    var notes: [String]
    var seconds: Double = 0
    /// Share of the machine's CPU time stolen by the hypervisor while the figure ran.
    var cpuSteal: Double?
    /// When the figure began (absent in results written before it was kept).
    var measuredAt: Date?

    init(figure: FigureKind, rows: [ResultRow], notes: [String] = []) {
        self.figure = figure
        self.title = figure.title
        self.rows = rows
        self.notes = notes
    }
}

/// One run of the benchmark.
struct BenchRun: Codable, Sendable {
    var startedAt: Date
    var seconds: Double
    var quick: Bool
    var machine: MachineFacts
    var figures: [FigureResult]
    /// Later runs whose figures replaced this run's (`stall-bench run --merge`), oldest first.
    var reruns: [Rerun]?

    /// A later run of some figures, merged into this one.
    struct Rerun: Codable, Sendable {
        var startedAt: Date
        var figures: [FigureKind]
        var machine: MachineFacts
    }

    /// This run with `later`'s figures in place of its own (others kept, in the figures' order),
    /// and `later` noted among the reruns; quick when either is.
    func replacingFigures(with later: BenchRun) -> BenchRun {
        var merged = self
        var byKind = Dictionary(figures.map { ($0.figure, $0) }, uniquingKeysWith: { _, last in last })
        for figure in later.figures { byKind[figure.figure] = figure }
        merged.figures = FigureKind.allCases.compactMap { byKind[$0] }
        merged.quick = quick || later.quick
        merged.reruns =
            (reruns ?? [])
            + [Rerun(startedAt: later.startedAt, figures: later.figures.map(\.figure), machine: later.machine)]
        return merged
    }
}
