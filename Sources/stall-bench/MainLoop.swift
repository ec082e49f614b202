import CoreFoundation
import Foundation
import Synchronization

/// Runs the main RunLoop (the loop StallMonitor watches by default) from the benchmark's main
/// thread. All state touched by the loop's callouts lives on the main thread.
enum MainLoop {
    /// One thing to do in a timer callout, `gap` seconds after the previous step finished (the
    /// loop sleeps in between, so each step is an awake span of its own).
    struct Step: Sendable {
        var gap: Double
        var body: @Sendable () -> Void
    }

    /// A source that never fires: it keeps the loop from returning "finished" when it has
    /// nothing else, so the loop sleeps instead of spinning.
    nonisolated(unsafe) private static var keepAlive: CFRunLoopSource?

    /// Runs the main loop until `finish` is called (from the loop's own callouts).
    static func run(_ start: (_ finish: @escaping @Sendable () -> Void) -> Void) {
        installKeepAlive()
        let done = Atomic<Bool>(false)
        start {
            done.store(true, ordering: .releasing)
            CFRunLoopStop(CFRunLoopGetMain())
        }
        while !done.load(ordering: .acquiring) {
            _ = CFRunLoopRunInMode(kCFRunLoopDefaultMode, 1e9, false)  // no timeout: a return would be a wake-up
        }
    }

    /// Runs `steps` one after another from main-loop timers, then returns.
    static func run(steps: [Step]) {
        run { finish in
            schedule(steps[...], finish: finish)
        }
    }

    /// Lets the main loop sleep for `seconds` (a timer ends it).
    static func idle(seconds: Double) {
        run(steps: [Step(gap: seconds, body: {})])
    }

    private static func schedule(_ steps: ArraySlice<Step>, finish: @escaping @Sendable () -> Void) {
        guard let step = steps.first else { return finish() }
        let rest = Array(steps.dropFirst())
        after(step.gap) {
            step.body()
            schedule(rest[...], finish: finish)
        }
    }

    /// Calls `body` from a main-loop timer `seconds` from now.
    static func after(_ seconds: Double, _ body: @escaping @Sendable () -> Void) {
        let timer = CFRunLoopTimerCreateWithHandler(nil, CFAbsoluteTimeGetCurrent() + seconds, 0, 0, 0) { _ in body() }
        CFRunLoopAddTimer(CFRunLoopGetMain(), timer, kCFRunLoopCommonModes)
    }

    private static func installKeepAlive() {
        guard keepAlive == nil else { return }
        var context = CFRunLoopSourceContext()
        context.perform = { _ in }
        let source = CFRunLoopSourceCreate(nil, 0, &context)
        CFRunLoopAddSource(CFRunLoopGetMain(), source, kCFRunLoopCommonModes)
        keepAlive = source
    }
}

/// A value written in a main-loop callout and read on the main thread after the loop returned.
final class Box<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
