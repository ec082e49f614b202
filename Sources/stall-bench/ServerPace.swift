import Foundation

/// How much slower a server answers under callgrind than natively, and the poll interval that
/// gives the monitor as many looks per request under callgrind as it has natively.
///
/// The monitor's looks come per unit of time (every poll interval, a token queued on a loop it
/// finds busy), its hooks per request. valgrind makes a server's requests several times slower
/// (four to eight here: its own code far more, curl and the kernel not at all), so at the native
/// interval a request would pay for that many times as many looks as at native speed. Figure 18 counts the monitored servers with the interval stretched by the slowdown
/// measured here, so what it counts per request is what a request costs natively.
struct ServerPace {
    /// Seconds per request natively and under callgrind: the unmonitored server, curl GET over one
    /// keep-alive connection after a warm-up.
    var native: Double
    var underCallgrind: Double

    /// The server's own poll interval natively (the demos' default).
    static let nativePollIntervalMs = 20

    /// Under callgrind ÷ natively.
    var slowdown: Double { underCallgrind / max(native, 1e-9) }

    /// The poll interval under callgrind: the native one times the slowdown (never shorter).
    var pollIntervalMs: Int {
        max(Self.nativePollIntervalMs, Int((Double(Self.nativePollIntervalMs) * slowdown).rounded()))
    }

    /// Measures `binary` started with `unmonitored(reports, portFile)`: natively, then under
    /// callgrind, each over `requests` requests of `path` after `warmUp`.
    static func measure(
        binary: URL, unmonitored: @escaping (_ reports: URL, _ portFile: URL) -> [String],
        environment: [String: String] = [:], path: String, requests: Int, warmUp: Int, context: BenchContext,
        stop: (_ url: String, _ process: Process) -> Void
    ) throws -> ServerPace {
        func timed(_ underCallgrind: Bool) throws -> Double {
            try ServerInstructions.secondsPerRequest(
                binary: binary, underCallgrind: underCallgrind, arguments: unmonitored, environment: environment,
                path: path, requests: requests, warmUp: warmUp, context: context, stop: stop)
        }
        return ServerPace(native: try timed(false), underCallgrind: try timed(true))
    }

    /// How the rows say it.
    var description: String {
        "poll interval \(pollIntervalMs) ms under callgrind for the native \(Self.nativePollIntervalMs) ms: the unmonitored server answered \(Format.fixed(slowdown, 1))× slower there (\(Format.fixed(underCallgrind * 1e6, 0)) vs \(Format.fixed(native * 1e6, 0)) µs per request over one curl connection)"
    }
}
