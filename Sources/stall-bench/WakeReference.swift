import ArgumentParser
import Foundation
import Glibc

/// `stall-bench wake-reference`: figure 15's yardstick. One thread, named `wake-reference`, does
/// nothing but sleep in `poll` (the watchdog sleeps in `ppoll`) for a second, again and again;
/// the figure measures its CPU time per wake-up beside the monitored hosts, in the same run. What
/// a wake-up costs a thread that does no work at all is the least any wake-up costs on the machine.
struct WakeReference: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wake-reference", abstract: "Reference process for the idle figure (a thread that only wakes).",
        shouldDisplay: false)

    /// The reference thread's name, which the figure looks for.
    static let threadName = "wake-reference"

    @Option(help: "How long the thread wakes once a second, in seconds.")
    var seconds = 10.0

    @Option(help: "Milliseconds between wake-ups.")
    var intervalMs = 1_000

    func run() throws {
        let wakeUps = Int((seconds * 1_000 / Double(max(intervalMs, 1))).rounded(.up))
        let named = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            Thread.current.name = Self.threadName
            named.signal()
            for _ in 0..<wakeUps { _ = poll(nil, 0, Int32(clamping: intervalMs)) }
            done.signal()
        }
        thread.start()
        named.wait()  // the figure looks the thread up by its name once this prints ready
        print("ready")
        fflush(nil)
        done.wait()
    }
}
