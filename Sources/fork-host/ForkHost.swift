import CoreFoundation
import Foundation
import Glibc
import StallMonitor

/// A host that forks while it runs a monitor (tests and the note on fork in the In production article): the parent
/// watches its main run loop and stalls once, then forks. The child stops the monitor it
/// inherited, starts one of its own, stalls 400 ms on its main run loop and stops; the parent
/// stalls again after the child exited. Each process prints one line:
///
///     child pid=<pid> inheritedStopMs=<ms> stalls=<n> written=<n> stopMs=<ms>
///     parent pid=<pid> child=<exit status> stalls=<n> written=<n>
///
///     fork-host <dir>          # reports of both processes in <dir>; exit 0 when both wrote theirs
///     fork-host <dir> idle     # the child only sleeps 300 ms and exits: it inherits, pays nothing
@main
struct ForkHost {
    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count >= 2 else {
            FileHandle.standardError.write(Data("usage: fork-host <report directory> [idle]\n".utf8))
            exit(64)
        }
        let directory = URL(fileURLWithPath: arguments[1])
        let childIdles = arguments.count > 2 && arguments[2] == "idle"
        let configuration = StallMonitor.Configuration(threshold: .milliseconds(250), reportDirectory: directory)
        let monitor: StallMonitor
        do { monitor = try StallMonitor.start(configuration, loop: .current) } catch {
            FileHandle.standardError.write(Data("fork-host: \(error)\n".utf8))
            exit(2)
        }
        stall(400)
        _ = monitor.flush()

        let pid = fork()
        if pid == 0 {
            if childIdles {
                usleep(300_000)
                _exit(0)
            }
            _exit(runChild(inherited: monitor, configuration: configuration))
        }
        guard pid > 0 else {
            FileHandle.standardError.write(Data("fork-host: fork failed: errno \(errno)\n".utf8))
            exit(2)
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        stall(400)
        _ = monitor.flush()
        let statistics = monitor.statistics
        monitor.stop()
        print(
            "parent pid=\(getpid()) child=\(status) stalls=\(statistics.stallsDetected) written=\(statistics.reportsWritten)"
        )
        exit(status == 0 && statistics.reportsWritten == 2 ? 0 : 1)
    }

    /// The child: stops what it inherited, then watches a new thread's run loop and stalls it once
    /// (the main run loop's descriptors are shared with the parent after fork: a child must not
    /// run it).
    static func runChild(inherited: StallMonitor, configuration: StallMonitor.Configuration) -> Int32 {
        let inheritedStop = milliseconds { inherited.stop() }
        let done = DispatchSemaphore(value: 0)
        let code = Box()
        let thread = Thread {
            defer { done.signal() }
            let monitor: StallMonitor
            do { monitor = try StallMonitor.start(configuration, loop: .current) } catch {
                FileHandle.standardError.write(Data("fork-host child: \(error)\n".utf8))
                code.value = 3
                return
            }
            // The loop runs the block, then sleeps until a CF timer stops it (`run(until:)` would
            // not return: its timeout is a Dispatch timer, and Dispatch's threads do not exist in a
            // forked child).
            let loop = CFRunLoopGetCurrent()
            let stopper = CFRunLoopTimerCreateWithHandler(nil, CFAbsoluteTimeGetCurrent() + 0.7, 0, 0, 0) { _ in
                CFRunLoopStop(loop)
            }
            CFRunLoopAddTimer(loop, stopper, kCFRunLoopDefaultMode)
            RunLoop.current.perform { usleep(400_000) }
            _ = RunLoop.current.run(mode: .default, before: .distantFuture)
            CFRunLoopTimerInvalidate(stopper)
            _ = monitor.flush()
            let statistics = monitor.statistics
            let stop = milliseconds { monitor.stop() }
            print(
                "child pid=\(getpid()) inheritedStopMs=\(inheritedStop) stalls=\(statistics.stallsDetected) "
                    + "written=\(statistics.reportsWritten) stopMs=\(stop)")
            fflush(nil)
            code.value = statistics.reportsWritten == 1 ? 0 : 1
        }
        thread.name = "fork-child"
        thread.start()
        done.wait()
        return code.value
    }

    /// The child thread's exit code.
    final class Box: @unchecked Sendable {
        var value: Int32 = 1
    }

    /// Runs the calling thread's run loop with one block that holds it `duration` ms, then idles
    /// 300 ms so the loop ends the span.
    static func stall(_ duration: Int) {
        RunLoop.current.perform { usleep(useconds_t(duration * 1_000)) }
        RunLoop.current.run(until: Date().addingTimeInterval(Double(duration + 300) / 1_000))
    }

    static func milliseconds(_ body: () -> Void) -> Int {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        return Int((DispatchTime.now().uptimeNanoseconds - start) / 1_000_000)
    }
}
