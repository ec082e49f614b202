import Foundation
import Glibc

/// The `chains` mode: one stall in each shape of async call, every async function noting its
/// name in a task-local trail before it awaits (the ground truth the report's async call chain is
/// compared with). Each leaf blocks 400 ms in `usleep` and prints
/// `chain <shape> thread <tid> truth <f1> > … > <leaf> | outer <g1> > …` (outermost first): the
/// functions of the leaf's own task, then those of the tasks it is a child of (a child task's
/// chain ends at its root, a closure written in the parent's function).
enum ChainWork {
    /// A function's name and the task it ran in.
    struct Note: Sendable {
        var name: String
        var task: UInt
    }

    @TaskLocal static var trail: [Note] = []

    static func currentTask() -> UInt {
        withUnsafeCurrentTask { task in task.map { UInt(bitPattern: unsafeBitCast($0, to: Int.self)) } ?? 0 }
    }

    /// Runs `next` with `name` noted on the trail.
    static func noting<T: Sendable>(_ name: String, _ next: @Sendable () async -> T) async -> T {
        await $trail.withValue(trail + [Note(name: name, task: currentTask())], operation: next)
    }

    /// Blocks the worker 400 ms and prints the ground truth of shape `shape`, ending at `leaf`.
    @inline(never)
    static func blockForChainTest(shape: String, leaf: String) {
        let task = currentTask()
        let all = trail + [Note(name: leaf, task: task)]
        let names = all.filter { $0.task == task }.map(\.name)
        let outer = all.filter { $0.task != task }.map(\.name)
        if ProcessInfo.processInfo.environment["POOL_STALL_HOST_CRASH"] == "1" {
            // The same point, for the Swift runtime's own backtracer (SWIFT_BACKTRACE=enable=yes).
            fatalError("crash in \(leaf) for the backtracer")
        }
        usleep(400_000)
        print(
            "chain \(shape) thread \(PoolWork.currentThreadID()) truth \(names.joined(separator: " > ")) | outer \(outer.joined(separator: " > "))"
        )
    }

    /// Runs every shape in turn, or only the one named `only`.
    static func run(only: String? = nil) async {
        let all: [(String, @Sendable () async -> Void)] = [
            ("direct", chainDirectHandler), ("nested", chainNested1), ("asynclet", chainAsyncLetParent),
            ("group", chainGroupParent), ("actor", chainActorCaller),
        ]
        for (name, shape) in all where only == nil || only == name {
            await Task.detached { await shape() }.value
            // The worker goes idle between two stalls (a new task at a freed one's address,
            // straight after it, would read as the same job).
            try? await Task.sleep(for: .milliseconds(100))
        }
    }
}

// Direct await: a handler awaits the function that blocks.
@inline(never) func chainDirectHandler() async {
    await ChainWork.noting("chainDirectHandler") { await chainDirectLeaf() }
}
@inline(never) func chainDirectLeaf() async { ChainWork.blockForChainTest(shape: "direct", leaf: "chainDirectLeaf") }

// Awaits nested five deep.
@inline(never) func chainNested1() async { await ChainWork.noting("chainNested1") { await chainNested2() } }
@inline(never) func chainNested2() async { await ChainWork.noting("chainNested2") { await chainNested3() } }
@inline(never) func chainNested3() async { await ChainWork.noting("chainNested3") { await chainNested4() } }
@inline(never) func chainNested4() async { await ChainWork.noting("chainNested4") { await chainNested5() } }
@inline(never) func chainNested5() async { await ChainWork.noting("chainNested5") { await chainNestedLeaf() } }
@inline(never) func chainNestedLeaf() async { ChainWork.blockForChainTest(shape: "nested", leaf: "chainNestedLeaf") }

// `async let`: the child task blocks.
@inline(never) func chainAsyncLetParent() async {
    await ChainWork.noting("chainAsyncLetParent") {
        async let child: Void = chainAsyncLetChild()
        await child
    }
}
@inline(never) func chainAsyncLetChild() async {
    await ChainWork.noting("chainAsyncLetChild") { await chainAsyncLetLeaf() }
}
@inline(never) func chainAsyncLetLeaf() async {
    ChainWork.blockForChainTest(shape: "asynclet", leaf: "chainAsyncLetLeaf")
}

// A task-group child blocks.
@inline(never) func chainGroupParent() async {
    await ChainWork.noting("chainGroupParent") {
        await withTaskGroup(of: Void.self) { group in group.addTask { await chainGroupChild() } }
    }
}
@inline(never) func chainGroupChild() async { await ChainWork.noting("chainGroupChild") { await chainGroupLeaf() } }
@inline(never) func chainGroupLeaf() async { ChainWork.blockForChainTest(shape: "group", leaf: "chainGroupLeaf") }

// An actor hop: the actor's method blocks.
actor ChainActor {
    @inline(never) func chainActorMethod() async {
        await ChainWork.noting("chainActorMethod") { await chainActorLeaf() }
    }
    @inline(never) func chainActorLeaf() async { ChainWork.blockForChainTest(shape: "actor", leaf: "chainActorLeaf") }
}
@inline(never) func chainActorCaller() async {
    await ChainWork.noting("chainActorCaller") { await ChainActor().chainActorMethod() }
}
