import Foundation
import NIOCore
import NIOHTTP1
import ToolSupport

/// The demo server's HTTP handler: `GET /<route>?ms=<n>` stalls the event loop the connection
/// belongs to in the route's way, then answers `200` with what it did and how long the stall
/// took by the handler's own clock (`cpu 400 ms, took 400.2 ms`). Keep-alive is honoured.
///
/// Routes: `/fast` (no stall), `/cpu`, `/read` (a blocking file read), `/sleep`, `/lock` (a mutex
/// another thread holds), `/wait` (a DispatchSemaphore wait with a timeout), `/later` (answered
/// after `ms` by a timer on the loop: never blocks), `/task` (a CPU spin in a task scheduled on
/// the loop, answered before it runs), `/quit` (stops the server).
final class StallRouteHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let quit: @Sendable () -> Void
    private var request: HTTPRequestHead?

    init(quit: @escaping @Sendable () -> Void) {
        self.quit = quit
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            request = head
        case .body:
            break
        case .end:
            guard let head = request else { return }
            request = nil
            if let delay = Self.laterDelay(head) {
                // Waits the way an event loop should: a timer on the loop, which stays free meanwhile.
                let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
                context.eventLoop.scheduleTask(in: .milliseconds(Int64(delay))) {
                    bound.value.handler.write(
                        status: .ok, body: "later \(delay) ms\n", keepAlive: head.isKeepAlive,
                        context: bound.value.context)
                }
                return
            }
            let (status, body) = respond(to: head, on: context.eventLoop)
            write(status: status, body: body, keepAlive: head.isKeepAlive, context: context)
        }
    }

    /// The delay of a `/later?ms=N` request (nil for other routes, or an `ms` out of range).
    private static func laterDelay(_ head: HTTPRequestHead) -> Int? {
        guard head.method == .GET, let url = URLComponents(string: head.uri), url.path == "/later" else { return nil }
        let ms = url.queryItems?.first { $0.name == "ms" }?.value.flatMap(Int.init) ?? 400
        return (0...60_000).contains(ms) ? ms : nil
    }

    private func respond(to head: HTTPRequestHead, on loop: any EventLoop) -> (HTTPResponseStatus, String) {
        guard head.method == .GET, let url = URLComponents(string: head.uri) else {
            return (.badRequest, "bad request\n")
        }
        let ms = url.queryItems?.first { $0.name == "ms" }?.value.flatMap(Int.init) ?? 400
        guard (0...60_000).contains(ms) else { return (.badRequest, "ms must be within 0…60000\n") }
        let began = CallerClock.begin()
        switch url.path {
        case "/fast": return (.ok, "ok\n")
        case "/cpu": HandlerStalls.spinOnCPU(milliseconds: ms)
        case "/read": HandlerStalls.blockingFileRead(milliseconds: ms)
        case "/sleep": HandlerStalls.sleepOnLoop(milliseconds: ms)
        case "/lock": HandlerStalls.waitForHeldLock(milliseconds: ms)
        case "/wait": HandlerStalls.waitOnSemaphore(milliseconds: ms)
        case "/task":
            loop.scheduleTask(in: .milliseconds(1)) { HandlerStalls.spinInScheduledTask(milliseconds: ms) }
            return (.ok, "scheduled a \(ms) ms task\n")
        case "/quit":
            quit()
            return (.ok, "bye\n")
        default: return (.notFound, "routes: /fast /cpu /read /sleep /lock /wait /later /task /quit (?ms=N)\n")
        }
        // The handler's own clock, to the microsecond, and how the loop's thread was disturbed meanwhile.
        let took = CallerClock.end(began)
        let rounded = (took.milliseconds * 1000).rounded() / 1000
        return (
            .ok, "\(url.path.dropFirst()) \(ms) ms, took \(rounded) ms\(took.disturbance.map { " (\($0))" } ?? "")\n"
        )
    }

    private func write(status: HTTPResponseStatus, body: String, keepAlive: Bool, context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "text/plain")
        headers.add(name: "content-length", value: "\(body.utf8.count)")
        if !keepAlive { headers.add(name: "connection", value: "close") }
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: body)))), promise: nil)
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
