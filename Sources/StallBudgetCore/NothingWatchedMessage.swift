/// The failure message of a budget that watched nothing.
enum NothingWatchedMessage {
    /// The advice every such message ends with: how to watch a test's code.
    static let howToWatch =
        "Watch the code the test runs: name the loop it runs on (`watching: .concurrencyPool`, "
        + "`.mainActor`, `.mainRunLoop`, or `.monitor { try StallMonitor.start($0, eventLoopGroup: group) }`), or run it on "
        + "a thread whose monitor counts (`ResidentLoopThread(name:monitor: StallBudget.configuration())`); a synchronous "
        + "XCTest body that blocks its own thread stalls no loop: make the test `async` (its budget then watches the "
        + "concurrency pool) or move the work onto such a loop."

    /// The message for a budget of `budget` whose only watch could not start, for `reason`.
    static func noMonitor(budget: Duration, watch: String?, reason: String?) -> String {
        let what: String
        if let watch, let reason {
            what =
                "could not watch \(watch) (\(reason)) and the test started no monitor with StallBudget.configuration()"
        } else {
            what =
                "had nothing to watch: the test named no loop and started no monitor with StallBudget.configuration()"
        }
        return
            "Nothing was watched: the \(StallBudgetViolation.milliseconds(budget.milliseconds)) stall budget \(what), "
            + "so a stall would have passed unnoticed. " + howToWatch
    }

    /// The message for a budget of `budget` whose monitors watched `watched`, none of which ran.
    static func notRunning(budget: Duration, watched: [String]) -> String {
        "Nothing was watched: none of the loops the \(StallBudgetViolation.milliseconds(budget.milliseconds)) stall budget "
            + "watched ran while the test did (\(watched.joined(separator: ", "))), so a stall would have passed unnoticed. "
            + howToWatch
    }
}

extension Duration {
    /// In milliseconds.
    var milliseconds: Double {
        Double(components.seconds) * 1e3 + Double(components.attoseconds) / 1e15
    }
}
