import Foundation
import ServiceLifecycle
import StallMonitorServiceLifecycle

/// The demo's app: once the monitor watches, a task spins the CPU for 400 ms on the concurrency
/// pool, then the MainActor blocks in `usleep` for 400 ms; then it returns.
struct StallingWork: Service {
    let stalls: StallMonitorService

    func run() async throws {
        // The group starts its services together: wait until the monitor's loops are watched.
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(10))
        while stalls.monitor == nil, stalls.startError == nil, clock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try await Task.sleep(for: .milliseconds(300))
        await Task.detached { spin(milliseconds: 400) }.value
        try await Task.sleep(for: .milliseconds(300))
        await MainActor.run { _ = usleep(400_000) }
        try await Task.sleep(for: .milliseconds(300))
    }
}

/// Keeps a CPU busy for `milliseconds` (a task that never suspends holds its pool worker).
@inline(never)
func spin(milliseconds: Int) {
    let end = ContinuousClock.now.advanced(by: .milliseconds(milliseconds))
    var spins = 0
    while ContinuousClock.now < end { spins &+= 1 }
    if spins == -1 { print(spins) }
}
