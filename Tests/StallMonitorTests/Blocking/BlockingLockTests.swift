import CStallMonitor
import Foundation
import Testing

@testable import StallMonitor

/// Locks and semaphores: a wait on one that is held (or at zero) is timed and recorded; taking one
/// that is free is tried without waiting and never recorded, whatever the threshold.
@Suite("Blocking calls: locks and semaphores", .serialized, .enabled(if: BlockingVisibility.executableCallsSeen))
struct BlockingLockTests {
    /// A pthread mutex and a semaphore shared with a helper thread (heap-allocated: never moved).
    final class Primitives: @unchecked Sendable {
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)

        init() {
            pthread_mutex_init(mutex, nil)
            sem_init(semaphore, 0, 0)
        }

        deinit {
            pthread_mutex_destroy(mutex)
            sem_destroy(semaphore)
            mutex.deallocate()
            semaphore.deallocate()
        }
    }

    @inline(never) static func lockMutexForBlockingTest(_ primitives: Primitives) {
        pthread_mutex_lock(primitives.mutex)
        pthread_mutex_unlock(primitives.mutex)
    }

    @inline(never) static func waitOnRawSemaphoreForBlockingTest(_ primitives: Primitives) {
        sem_wait(primitives.semaphore)
    }

    /// Runs `body` in a task while a helper thread holds the mutex: the task tells the helper
    /// right before it calls `body`, and the helper lets go (and posts the semaphore)
    /// `holdMilliseconds` later, long enough that a loaded machine's preemption between the two
    /// cannot make the wait vanish. Returns the calls recorded.
    static func calls(
        holdMilliseconds: Int, _ body: @escaping @Sendable (Primitives) -> Void
    ) async throws -> [BlockingCall] {
        let primitives = Primitives()
        let detector = try BlockingCallDetector.startScoped(.init(threshold: .milliseconds(1)))
        defer { detector.stop() }
        let held = DispatchSemaphore(value: 0)
        let calling = DispatchSemaphore(value: 0)
        let helper = Thread {
            pthread_mutex_lock(primitives.mutex)
            held.signal()
            calling.wait()
            usleep(useconds_t(holdMilliseconds * 1000))
            pthread_mutex_unlock(primitives.mutex)
            sem_post(primitives.semaphore)
        }
        helper.start()
        held.wait()
        await detector.attributing {
            await Task {
                calling.signal()
                body(primitives)
            }.value
        }
        return detector.takeCalls()
    }

    @Test("a held mutex and an empty semaphore are recorded as pthread_mutex_lock and sem_wait, each once")
    func heldLockAndEmptySemaphore() async throws {
        let lock = try await Self.calls(holdMilliseconds: 100) { Self.lockMutexForBlockingTest($0) }
            .filter { $0.frames.contains { $0.function?.contains("lockMutexForBlockingTest") == true } }
        #expect(lock.map(\.call) == ["pthread_mutex_lock"], "\(lock)")
        #expect(lock.allSatisfy { $0.duration >= .milliseconds(1) }, "\(lock)")
        let wait = try await Self.calls(holdMilliseconds: 100) { Self.waitOnRawSemaphoreForBlockingTest($0) }
            .filter { $0.frames.contains { $0.function?.contains("waitOnRawSemaphoreForBlockingTest") == true } }
        if BlockingVisibility.executableDefines("sem_wait") {
            // A sanitizer's runtime defines sem_wait in the executable: the test's own call is not seen.
            #expect(wait.isEmpty, "\(wait)")
        } else {
            #expect(wait.map(\.call) == ["sem_wait"], "\(wait)")
        }
        #expect(wait.allSatisfy { $0.duration >= .milliseconds(1) }, "\(wait)")
    }

    @Test("a free mutex and a semaphore with a count are taken without a record")
    func freeLockAndCountedSemaphore() async throws {
        let primitives = Primitives()
        sem_post(primitives.semaphore)
        let detector = try BlockingCallDetector.startScoped(.init(threshold: .milliseconds(1)))
        defer { detector.stop() }
        await detector.attributing {
            await Task {
                Self.lockMutexForBlockingTest(primitives)
                Self.waitOnRawSemaphoreForBlockingTest(primitives)
            }.value
        }
        let calls = detector.takeCalls().filter {
            $0.frames.contains { frame in
                frame.function?.contains("lockMutexForBlockingTest") == true
                    || frame.function?.contains("waitOnRawSemaphoreForBlockingTest") == true
            }
        }
        #expect(calls.isEmpty, "\(calls)")
    }
}
