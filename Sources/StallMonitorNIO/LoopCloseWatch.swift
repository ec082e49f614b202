#if NIO
import Glibc
import NIOCore
import NIOPosix
import Synchronization

/// Tells when an event loop begins to close, so that the probe queues nothing on it from then on
/// (NIO refuses tasks on a loop that has closed: an error on stderr, a crash in its strict mode).
///
/// On a SwiftNIO `MultiThreadedEventLoopGroup` loop it is a pipe channel registered on the loop
/// whose other end nobody writes: the loop never hears from it, and closing the loop closes its
/// channels first. Where the loop takes no pipe (another kind of loop, no descriptors left), it is
/// a far-future scheduled task, which a closing loop fails; but a loop with a scheduled task
/// looks at it on every tick (a copy, its retains and a deadline each time: about 0.5 % of a small
/// request's instructions on a server that schedules nothing else, figure 18), so the pipe comes
/// first. Closed or cancelled, either says so once through `onClose`.
final class LoopCloseWatch: Sendable {
    private enum Watch {
        case pending
        case pipe(any Channel)
        case scheduled(Scheduled<Void>)
        /// The loop closed (or the watch was cancelled): nothing is left to stop.
        case ended
    }

    private let watch = Mutex<Watch>(.pending)

    /// Starts watching `loop`; `onClose` runs once (on the loop, or on the calling thread when the
    /// loop refused the watch) when the loop closes or the watch is cancelled.
    init(loop: any EventLoop, onClose: @escaping @Sendable () -> Void) {
        guard let bootstrap = NIOPipeBootstrap(validatingGroup: loop) else {
            schedule(on: loop, onClose: onClose)
            return
        }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            schedule(on: loop, onClose: onClose)
            return
        }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        // Not inherited by a program the host executes (NIO makes the read end non-blocking).
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        bootstrap.takingOwnershipOfDescriptor(input: readEnd).whenComplete { [self] result in
            switch result {
            case .success(let channel):
                // On the loop: the channel closes with it (NIO closes the read end), before the
                // loop stops taking tasks.
                channel.closeFuture.whenComplete { [self] _ in
                    close(writeEnd)
                    watch.withLock { $0 = .ended }
                    onClose()
                }
                let cancelled = watch.withLock { watch -> Bool in
                    guard case .pending = watch else { return true }
                    watch = .pipe(channel)
                    return false
                }
                if cancelled { channel.close(promise: nil) }
            case .failure:
                close(readEnd)
                close(writeEnd)
                schedule(on: loop, onClose: onClose)
            }
        }
    }

    /// The fallback: a scheduled task a year ahead, which a closing loop fails.
    private func schedule(on loop: any EventLoop, onClose: @escaping @Sendable () -> Void) {
        let sentinel = loop.scheduleTask(in: .hours(24 * 365)) {}
        sentinel.futureResult.whenFailure { [self] _ in
            watch.withLock { $0 = .ended }
            onClose()
        }
        let cancelled = watch.withLock { watch -> Bool in
            guard case .pending = watch else { return true }
            watch = .scheduled(sentinel)
            return false
        }
        if cancelled { sentinel.cancel() }
    }

    /// Stops watching (the monitor stopped): closes the pipe channel or cancels the task, which
    /// calls `onClose`. Nothing once the loop has closed (it takes no task then).
    func cancel() {
        let current = watch.withLock { watch -> Watch in
            defer { if case .pending = watch { watch = .ended } }
            return watch
        }
        switch current {
        case .pipe(let channel): channel.close(promise: nil)
        case .scheduled(let sentinel): sentinel.cancel()
        case .pending, .ended: break
        }
    }
}
#endif
