// What CoreFoundation's observer dispatch costs a busy run loop, per observed activity, without
// StallMonitor (see recheck-observer.md). Not part of the package; build and run it by hand:
//
//   swiftc -O Reports/benchmarks/recheck-observer-dispatch.swift -o /tmp/dispatch
//   /tmp/dispatch 4          # configuration 4 vs no observer: 31 alternating pairs of 0.1 s runs
//   CLOCK=1 /tmp/dispatch 4  # the callbacks read CLOCK_MONOTONIC, as the monitor's do
//   valgrind --tool=cachegrind --cache-sim=no /tmp/dispatch 4 count   # instructions, 100,000 passes
//
// The workload is figure 1a's: a chain of CFRunLoopPerformBlock blocks on the main run loop, each
// queueing the next and waking the loop, so every pass runs beforeTimers, beforeWaiting, a wait
// that returns at once, and afterWaiting. Every run uses a mode of its own: CF never clears a
// mode's observer mask when an observer is removed, so a mode that ever had an observer pays for
// the bare dispatch of its activities forever (as the "without" runs of Scripts/bench figure 1 do
// after the first monitored run).
import CoreFoundation
import Foundation
import Glibc

@inline(__always) func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Every pass's time, in preallocated memory.
final class Recorder: @unchecked Sendable {
    var times = UnsafeMutablePointer<UInt64>.allocate(capacity: 4_000_000)
    var count = 0
    var end: UInt64 = 0
    func mark() -> UInt64 {
        let t = now()
        if count < 4_000_000 {
            times[count] = t
            count += 1
        }
        return t
    }
    func medianPass() -> Double {
        var d = (1..<count).map { Double(times[$0] &- times[$0 - 1]) }
        d.sort()
        return d[d.count / 2]
    }
}

let recorder = Recorder()
nonisolated(unsafe) var sink: UInt64 = 0
nonisolated(unsafe) var mode: CFString = CFStringCreateWithCString(nil, "m0", CFStringBuiltInEncodings.UTF8.rawValue)
nonisolated(unsafe) var modeCounter = 0
nonisolated(unsafe) var passesLeft = 0  // > 0: run that many passes (for instruction counts)
nonisolated(unsafe) var readClock = getenv("CLOCK") != nil

func step() {
    if passesLeft > 0 {
        passesLeft -= 1
        if passesLeft == 0 {
            CFRunLoopStop(CFRunLoopGetMain())
            return
        }
    } else if recorder.mark() >= recorder.end {
        CFRunLoopStop(CFRunLoopGetMain())
        return
    }
    CFRunLoopPerformBlock(CFRunLoopGetMain(), mode) { step() }
    CFRunLoopWakeUp(CFRunLoopGetMain())
}

func runOnce(_ seconds: Double, _ observers: [CFRunLoopObserver] = []) -> Double {
    modeCounter += 1
    mode = CFStringCreateWithCString(nil, "m\(modeCounter)", CFStringBuiltInEncodings.UTF8.rawValue)
    for o in observers { CFRunLoopAddObserver(CFRunLoopGetMain(), o, mode) }
    defer { for o in observers { CFRunLoopRemoveObserver(CFRunLoopGetMain(), o, mode) } }
    recorder.count = 0
    recorder.end = now() + UInt64(seconds * 1e9)
    CFRunLoopPerformBlock(CFRunLoopGetMain(), mode) { step() }
    CFRunLoopWakeUp(CFRunLoopGetMain())
    CFRunLoopRunInMode(mode, 100, false)
    return passesLeft == 0 && recorder.count > 1 ? recorder.medianPass() : 0
}

let callout: CFRunLoopObserverCallBack = { _, activity, _ in
    if readClock { sink &+= now() } else { sink &+= UInt64(activity.rawValue) }
}

func make(_ activities: CFOptionFlags, _ order: Int) -> CFRunLoopObserver {
    var context = CFRunLoopObserverContext(version: 0, info: nil, retain: nil, release: nil, copyDescription: nil)
    return CFRunLoopObserverCreate(nil, activities, true, order, callout, &context)
}

let E = CFRunLoopActivity.entry.rawValue
let BT = CFRunLoopActivity.beforeTimers.rawValue
let BW = CFRunLoopActivity.beforeWaiting.rawValue
let AW = CFRunLoopActivity.afterWaiting.rawValue
let X = CFRunLoopActivity.exit.rawValue

let configurations: [(String, [(CFOptionFlags, Int)])] = [
    ("none", []),
    (
        "StallMonitor's: entry|beforeTimers|afterWaiting first + beforeWaiting|exit last",
        [(E | BT | AW, Int.min), (BW | X, Int.max)]
    ),
    (
        "without beforeTimers: entry|afterWaiting first + beforeWaiting|exit last",
        [(E | AW, Int.min), (BW | X, Int.max)]
    ),
    ("one observer of all five", [(E | BT | AW | BW | X, 0)]),
    ("afterWaiting first + beforeWaiting last", [(AW, Int.min), (BW, Int.max)]),
    ("beforeTimers only", [(BT, Int.min)]),
    ("afterWaiting only", [(AW, Int.min)]),
    ("beforeWaiting only", [(BW, Int.max)]),
]

let index = Int(CommandLine.arguments.dropFirst().first ?? "1") ?? 1
let configuration = configurations[index]
let observers = configuration.1.map { make($0.0, $0.1) }
if CommandLine.arguments.count > 2 && CommandLine.arguments[2] == "count" {
    passesLeft = 100_000
    _ = runOnce(1_000, observers)
    exit(0)
}
let pairs = 31
_ = runOnce(0.05)  // warm-up
var with: [Double] = []
var without: [Double] = []
var ratios: [Double] = []
for pair in 0..<pairs {
    for observed in pair % 2 == 0 ? [false, true] : [true, false] {
        if observed { with.append(runOnce(0.1, observers)) } else { without.append(runOnce(0.1)) }
    }
}
for i in 0..<pairs { ratios.append(without[i] / with[i]) }
ratios.sort()
with.sort()
without.sort()
print(
    "\(configuration.0)\(readClock ? ", callbacks read the clock" : ""): ratio \(String(format: "%.4f", ratios[pairs / 2])) "
        + "(median pass \(Int(with[pairs / 2])) vs \(Int(without[pairs / 2])) ns; IQR \(String(format: "%.4f", ratios[pairs / 4]))–\(String(format: "%.4f", ratios[3 * pairs / 4])))"
        + (sink == 42 ? "" : ""))
