import ArgumentParser
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import StallMonitor
import StallMonitorNIO

/// A plain SwiftNIO HTTP server whose routes stall their event loop in known ways, with
/// StallMonitor watching every loop of its group.
@main
struct NIOStallDemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nio-stall-demo",
        abstract: "A SwiftNIO HTTP server whose routes stall their event loop, with StallMonitor watching every loop.",
        discussion: """
            Routes (GET, ?ms=N, default 400): /fast (no stall), /cpu (a CPU spin), /read (a blocking \
            read of a file descriptor), /sleep (usleep), /lock (a mutex another thread holds), /wait (a \
            DispatchSemaphore wait), /later (answered after ms by a timer: never blocks), /task \
            (a CPU spin in a task scheduled on the loop), /quit (stops the server; so do SIGINT and \
            SIGTERM). Prints the address it listens on, then one line per report written, then the \
            monitor's counts as one JSON line when it stops.

            Example: nio-stall-demo --output ./nio-stall-reports --port 8080 & curl 'localhost:8080/cpu?ms=400'
            """)

    @Option(name: .shortAndLong, help: "Directory for the stall reports (created 0700 if missing).")
    var output: String = "nio-stall-reports"

    @Option(help: "TCP port on 127.0.0.1 (0: any free port).")
    var port: Int = 0

    @Option(name: .customLong("port-file"), help: "Write the port the server listens on to this file once it listens.")
    var portFile: String?

    @Option(help: "Event loop threads.")
    var threads: Int = 2

    @Flag(
        help: "Use MultiThreadedEventLoopGroup.singleton (as Hummingbird and Vapor do) instead of a group of its own.")
    var singleton = false

    @Option(name: .customLong("threshold-ms"), help: "Stall threshold in milliseconds.")
    var thresholdMs: Int = 250

    @Option(name: .customLong("poll-interval-ms"), help: "How often the watchdog looks at the loops.")
    var pollIntervalMs: Int = 20

    @Flag(help: "Run without StallMonitor (the baseline of Scripts/bench).")
    var noMonitor = false

    @Option(
        name: .customLong("blocking-threshold-ms"),
        help:
            "Also report blocking calls on the event loops of at least this many milliseconds (blocking-calls reports, one a second)."
    )
    var blockingThresholdMs: Int?

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be within 0…65535") }
        guard (1...64).contains(threads) else { throw ValidationError("--threads must be within 1…64") }
        guard thresholdMs > 0 else { throw ValidationError("--threshold-ms must be positive") }
        guard pollIntervalMs >= 1 else { throw ValidationError("--poll-interval-ms must be at least 1") }
        guard (blockingThresholdMs ?? 1) >= 1 else {
            throw ValidationError("--blocking-threshold-ms must be at least 1")
        }
    }

    func run() throws {
        let group: MultiThreadedEventLoopGroup =
            singleton ? .singleton : MultiThreadedEventLoopGroup(numberOfThreads: threads)
        var configuration = StallMonitor.Configuration(
            threshold: .milliseconds(thresholdMs),
            reportDirectory: URL(fileURLWithPath: output, isDirectory: true),
            appVersion: "nio-stall-demo 1.0",
            logger: Self.quietLogger,
            onReport: { report, url in
                print(
                    "wrote \(url.path)  \(Int(report.durationMs.rounded())) ms  \(report.loop.threadName)  \(report.representativeFunction)"
                )
                fflush(nil)
            })
        configuration.blockingCalls = blockingThresholdMs.map {
            .init(threshold: .milliseconds($0), reportInterval: .seconds(1))
        }
        let monitor =
            noMonitor
            ? nil
            : try StallMonitor.start(configuration, eventLoopGroup: group, pollInterval: .milliseconds(pollIntervalMs))

        let server = ServerChannelBox()
        let quit: @Sendable () -> Void = { server.channel?.close(promise: nil) }
        let channel = try ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(StallRouteHandler(quit: quit))
                }
            }
            .bind(host: "127.0.0.1", port: port)
            .wait()
        server.channel = channel
        let stopSignals = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler(handler: quit)
            source.resume()
            return source
        }
        let boundPort = channel.localAddress?.port ?? port
        if let portFile { try "\(boundPort)\n".write(toFile: portFile, atomically: true, encoding: .utf8) }
        print(
            "listening on http://127.0.0.1:\(boundPort)  (\(singleton ? "singleton group" : "\(threads) event loops"), monitor \(noMonitor ? "off" : "on"))"
        )
        fflush(nil)
        try channel.closeFuture.wait()
        for source in stopSignals { source.cancel() }

        if let monitor {
            monitor.stop()
            let stats = monitor.statistics
            let loops = monitor.watchedLoops.map { "\"\($0.threadName ?? "?")\"" }.joined(separator: ",")
            print(
                "{\"stallsDetected\":\(stats.stallsDetected),\"reportsWritten\":\(stats.reportsWritten),\"watchdogWakeups\":\(stats.watchdogWakeups),\"loops\":[\(loops)]}"
            )
        }
        if !singleton { try group.syncShutdownGracefully() }
    }

    /// The demo prints each report itself; the monitor's own info lines would say it again.
    static var quietLogger: Logger {
        var logger = Logger(label: "nio-stall-demo")
        logger.logLevel = .notice
        return logger
    }
}

/// The listening channel, set once it is bound, for the quit route and the stop signals.
final class ServerChannelBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: (any Channel)?

    var channel: (any Channel)? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
