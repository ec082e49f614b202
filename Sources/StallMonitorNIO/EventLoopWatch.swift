#if NIO
import NIOCore
import StallMonitor
import Synchronization

/// One event loop as the monitor's pull probe sees it: idle while its thread waits in
/// `epoll_wait`, and a way to run the probe's tasks on it that stops once the loop shuts down.
///
/// A ``LoopCloseWatch`` tells when the loop begins to close: from then on the probe queues nothing
/// more on it (NIO refuses tasks on a loop that has shut down). The watch ends when the monitor stops.
final class EventLoopWatch: Sendable {
    /// The syscalls an idle NIO event loop on Linux waits in.
    static let idleSyscalls = SyscallTable.numbers(["epoll_wait", "epoll_pwait", "epoll_pwait2"])

    private let loop: any EventLoop
    /// Shared with the close watch's callback, which must not keep the watch alive (and takes no
    /// weak reference: its side table would outlive the watch in the loop's callbacks).
    private let shutDown = ShutDownFlag()
    private let closeWatch: LoopCloseWatch

    init(loop: any EventLoop) {
        self.loop = loop
        closeWatch = LoopCloseWatch(loop: loop) { [shutDown] in shutDown.set() }
    }

    /// Every loop of `group`, each once.
    static func loops(of group: any EventLoopGroup) -> [any EventLoop] {
        var seen = Set<ObjectIdentifier>()
        var loops: [any EventLoop] = []
        for loop in group.makeIterator() where seen.insert(ObjectIdentifier(loop)).inserted {
            loops.append(loop)
        }
        return loops
    }

    /// The description of this loop the core's pull probe takes.
    var polledLoop: PolledLoop {
        PolledLoop(
            kind: StallMonitor.nioEventLoopKind, idleSyscalls: Self.idleSyscalls,
            execute: { [self] task in
                guard !shutDown.isSet else { return false }
                loop.execute(task)
                return true
            },
            detach: { [self] in closeWatch.cancel() })
    }
}

/// Whether a watched loop has shut down (its sentinel failed).
private final class ShutDownFlag: Sendable {
    private let flag = Atomic<Bool>(false)

    var isSet: Bool { flag.load(ordering: .acquiring) }

    func set() { flag.store(true, ordering: .releasing) }
}
#endif
