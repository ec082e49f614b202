import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import StallMonitor
import StallMonitorNIO

/// A real SwiftNIO HTTP server on 127.0.0.1 (a group of its own) for one test. Routes (GET):
/// `/fast`, `/whoami` (the loop thread's kernel id), `/block?ms=N` (sleeps in
/// ``TestHandlers/blockTheLoopForTest(milliseconds:)`` and answers how long that took by the
/// handler's own clock), `/async-block?ms=N` and `/async-fast` (async routes as Vapor 4 runs
/// them: in a task on the concurrency pool).
final class LoopbackHTTPServer: Sendable {
    let group: MultiThreadedEventLoopGroup
    let channel: any Channel
    let port: Int

    init(loops: Int) throws {
        group = MultiThreadedEventLoopGroup(numberOfThreads: loops)
        channel = try ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.backlog, value: 512)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(TestRouteHandler())
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .wait()
        port = channel.localAddress?.port ?? 0
    }

    /// Closes the listening socket and shuts the group down (after the monitor has stopped).
    func shutDown() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }
}

/// What the test server's handlers do, each in a function of its own so a stack names it.
enum TestHandlers {
    /// Sleeps `milliseconds` on the event loop; returns how long that took, in ms.
    @inline(never)
    static func blockTheLoopForTest(milliseconds: Int) -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        usleep(UInt32(milliseconds) * 1000)
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
    }

    /// Sleeps `milliseconds` in an async route's task (on the concurrency pool, not a loop);
    /// returns how long that took, in ms.
    @inline(never)
    static func blockInAsyncRouteForTest(milliseconds: Int) async -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        usleep(UInt32(milliseconds) * 1000)
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
    }

    /// Spins `milliseconds` on the CPU; returns how long that took, in ms.
    @inline(never)
    static func spinInLoopTaskForTest(milliseconds: Int) -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        let end = start + UInt64(milliseconds) * 1_000_000
        var sink: UInt64 = 1
        while DispatchTime.now().uptimeNanoseconds < end {
            for value in 0..<500 { sink = sink &* 31 &+ UInt64(value) }
        }
        if sink == 0x5eed { print("") }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
    }
}

private final class TestRouteHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private var request: HTTPRequestHead?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): request = head
        case .body: break
        case .end:
            guard let head = request else { return }
            request = nil
            let body: String
            let url = URLComponents(string: head.uri)
            let ms = url?.queryItems?.first { $0.name == "ms" }?.value.flatMap(Int.init) ?? 0
            if url?.path == "/async-block" || url?.path == "/async-fast" {
                // An async route as Vapor 4 runs one: the handler runs in a task on the
                // concurrency pool, the response is written back on the channel's loop.
                let loop = context.eventLoop
                let respond = NIOLoopBound(Respond(context: context, handler: self), eventLoop: loop)
                let block = url?.path == "/async-block"
                Task {
                    let answer = block ? "\(await TestHandlers.blockInAsyncRouteForTest(milliseconds: ms))" : "ok"
                    loop.execute { respond.value.send(answer) }
                }
                return
            }
            switch url?.path {
            case "/whoami": body = "\(Kernel.currentThreadID())"
            case "/block": body = "\(TestHandlers.blockTheLoopForTest(milliseconds: ms))"
            default: body = "ok"
            }
            send(body, context: context)
        }
    }

    fileprivate func send(_ body: String, context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "content-length", value: "\(body.utf8.count)")
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: body)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}

/// Writes an async route's answer (on the channel's loop).
private struct Respond {
    let context: ChannelHandlerContext
    let handler: TestRouteHandler

    func send(_ body: String) { handler.send(body, context: context) }
}
