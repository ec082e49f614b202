import Foundation

/// The loop kinds figure 15 idles, each in a host process of its own that can run with or
/// without a StallMonitor.
enum IdleLoopKind: CaseIterable {
    /// The main RunLoop (`stall-bench idle-host`).
    case runLoop
    /// Two SwiftNIO event loops (`nio-stall-demo`, a server nobody calls).
    case nioEventLoops
    /// The MainActor of an `async main` program (`async-main-host idle`).
    case mainActor
    /// The Swift concurrency pool (`pool-stall-host idle`).
    case concurrencyPool
    /// A Hummingbird 2 server nobody calls (`hummingbird-stall-demo`: its event loops, the pool
    /// and blocking calls watched).
    case hummingbird

    /// The row id of this kind in figure 15.
    var part: String {
        switch self {
        case .runLoop: return "15a"
        case .nioEventLoops: return "15b"
        case .mainActor: return "15c"
        case .concurrencyPool: return "15d"
        case .hummingbird: return "15e"
        }
    }

    /// The kind and its host, for the row's name.
    var name: String {
        switch self {
        case .runLoop: return "main RunLoop (stall-bench idle-host)"
        case .nioEventLoops: return "2 NIO event loops (nio-stall-demo)"
        case .mainActor: return "MainActor under async main (async-main-host)"
        case .concurrencyPool: return "concurrency pool (pool-stall-host)"
        case .hummingbird: return "Hummingbird 2 server (hummingbird-stall-demo)"
        }
    }

    /// Why this kind's host cannot run here (nil: it can): the Hummingbird server is built in its
    /// own package, which `Scripts/bench` builds and links beside the other binaries.
    func unavailable(_ context: BenchContext) -> String? {
        guard self == .hummingbird else { return nil }
        do {
            _ = try context.binary("hummingbird-stall-demo")
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// Starts this kind's host, monitored or not, idle for `seconds` (or until stopped), and
    /// waits until it is ready.
    func start(_ context: BenchContext, monitored: Bool, seconds: Double) throws -> IdleHostProcess {
        let reports = context.freshDirectory("idle-\(part)")
        let duration = String(seconds)
        switch self {
        case .runLoop:
            return try IdleHostProcess(
                context.executable,
                ["idle-host", "--seconds", duration, "--reports", reports.path]
                    + (monitored ? [] : ["--no-monitor"]), scratch: context.scratch)
        case .nioEventLoops:
            let portFile = reports.appendingPathComponent("port")
            return try IdleHostProcess(
                try context.binary("nio-stall-demo"),
                ["--output", reports.path, "--port-file", portFile.path, "--threads", "2"]
                    + (monitored ? [] : ["--no-monitor"]),
                scratch: context.scratch, readyFile: portFile)
        case .mainActor:
            return try IdleHostProcess(
                try context.binary("async-main-host"), [monitored ? "idle" : "idle-unwatched", reports.path, duration],
                scratch: context.scratch)
        case .concurrencyPool:
            return try IdleHostProcess(
                try context.binary("pool-stall-host"), [monitored ? "idle" : "idle-unwatched", reports.path, duration],
                scratch: context.scratch)
        case .hummingbird:
            let portFile = reports.appendingPathComponent("port")
            return try IdleHostProcess(
                try context.binary("hummingbird-stall-demo"),
                [reports.path, portFile.path] + (monitored ? [] : ["unwatched"]), scratch: context.scratch,
                readyFile: portFile)
        }
    }
}
