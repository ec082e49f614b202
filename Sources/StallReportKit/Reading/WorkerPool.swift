import Foundation

/// Runs a fixed number of workers on Dispatch's pool and returns what each one produced.
///
/// Each worker writes only its own result slot and the slots are read only after every worker has
/// returned, so no lock is needed. This matters beyond speed: `Synchronization.Mutex` locks with
/// futex calls from the uninstrumented standard library, so ThreadSanitizer cannot see its order
/// and reports the state it guards as a race (the `stallreport` process then exits with TSan's
/// status). The end of `DispatchQueue.concurrentPerform` is an order TSan does see.
enum WorkerPool {
    /// Runs `work(worker)` for `worker` in `0..<workers` concurrently; the results in worker order.
    static func run<Output: Sendable>(workers: Int, _ work: @Sendable (Int) -> Output) -> [Output] {
        guard workers > 0 else { return [] }
        let slots = Slots<Output>(count: workers)
        defer { slots.deallocate() }
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            slots.store(work(worker), at: worker)
        }
        return slots.collect()
    }

    /// One result slot per worker.
    ///
    /// `@unchecked Sendable`: slot `i` is written once, by worker `i` only, and every slot is read
    /// after `concurrentPerform` has returned (which orders all the workers' writes before it).
    private final class Slots<Output>: @unchecked Sendable {
        private let buffer: UnsafeMutableBufferPointer<Output?>

        init(count: Int) {
            buffer = .allocate(capacity: count)
            buffer.initialize(repeating: nil)
        }

        func store(_ output: Output, at index: Int) {
            buffer[index] = output
        }

        func collect() -> [Output] {
            buffer.map { $0! }
        }

        func deallocate() {
            _ = buffer.deinitialize()
            buffer.deallocate()
        }
    }
}
