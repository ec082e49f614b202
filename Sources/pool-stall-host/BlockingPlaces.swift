import Dispatch
import Foundation
import ToolSupport

/// The `blocking-places` mode: blocking calls of known lengths in each place a Swift task runs
/// (an unstructured `Task`, a task-group child, an `async let`, an actor method, a `@MainActor`
/// function), each a DispatchSemaphore wait with a timeout (made through libdispatch's own GOT,
/// seen in every build), and as many awaiting controls (`Task.sleep`) in the same places. Each
/// blocking call prints `blocked <place> <requested ms> <measured ms> <disturbed> <thread> <function>`,
/// measured by the caller's own clock around the wait alone (`disturbed` is 1 when the thread was
/// preempted or slept again around the wait, else 0: ``CallerClock``).
enum BlockingPlaces {
    /// The lengths of the calls, in milliseconds.
    static let lengths = [2, 5, 20, 100]

    /// Waits `milliseconds` on a semaphore nobody signals; prints the caller's measurement.
    @inline(never)
    static func wait(_ place: String, _ milliseconds: Int, function: String) {
        let semaphore = DispatchSemaphore(value: 0)
        let begun = CallerClock.begin()
        _ = semaphore.wait(timeout: .now() + .milliseconds(milliseconds))
        let measured = CallerClock.end(begun)
        print(
            "blocked \(place) \(milliseconds) \(measured.milliseconds) \(measured.disturbed ? 1 : 0)",
            PoolWork.currentThreadID(), function)
    }

    @inline(never)
    static func blockInUnstructuredTaskForTest(_ milliseconds: Int) { wait("task", milliseconds, function: #function) }
    @inline(never)
    static func blockInGroupChildForTest(_ milliseconds: Int) { wait("group", milliseconds, function: #function) }
    @inline(never)
    static func blockInAsyncLetForTest(_ milliseconds: Int) async {
        wait("asynclet", milliseconds, function: #function)
    }
    @MainActor @inline(never)
    static func blockOnMainActorForTest(_ milliseconds: Int) { wait("mainActor", milliseconds, function: #function) }

    @inline(never)
    static func awaitInUnstructuredTaskForControl(_ milliseconds: Int) async {
        try? await Task.sleep(for: .milliseconds(milliseconds))
    }
    @inline(never)
    static func awaitInGroupChildForControl(_ milliseconds: Int) async {
        try? await Task.sleep(for: .milliseconds(milliseconds))
    }
    @inline(never)
    static func awaitInAsyncLetForControl(_ milliseconds: Int) async {
        try? await Task.sleep(for: .milliseconds(milliseconds))
    }
    @MainActor @inline(never)
    static func awaitOnMainActorForControl(_ milliseconds: Int) async {
        try? await Task.sleep(for: .milliseconds(milliseconds))
    }

    /// Makes every call, one at a time, each followed by its control.
    static func run() async {
        let actor = BlockingActor()
        for milliseconds in lengths {
            await Task { blockInUnstructuredTaskForTest(milliseconds) }.value
            await Task { await awaitInUnstructuredTaskForControl(milliseconds) }.value
            await withTaskGroup(of: Void.self) { group in
                group.addTask { blockInGroupChildForTest(milliseconds) }
            }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await awaitInGroupChildForControl(milliseconds) }
            }
            async let blocked: Void = blockInAsyncLetForTest(milliseconds)
            await blocked
            async let awaited: Void = awaitInAsyncLetForControl(milliseconds)
            await awaited
            await actor.blockInActorMethodForTest(milliseconds)
            await actor.awaitInActorMethodForControl(milliseconds)
            await blockOnMainActorForTest(milliseconds)
            await awaitOnMainActorForControl(milliseconds)
        }
    }
}

/// An actor whose methods block and await (`blocking-places`).
actor BlockingActor {
    @inline(never)
    func blockInActorMethodForTest(_ milliseconds: Int) {
        BlockingPlaces.wait("actor", milliseconds, function: #function)
    }
    @inline(never)
    func awaitInActorMethodForControl(_ milliseconds: Int) async {
        try? await Task.sleep(for: .milliseconds(milliseconds))
    }
}
