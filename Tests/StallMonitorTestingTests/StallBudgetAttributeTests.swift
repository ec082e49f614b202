import Foundation
import NIOCore
import NIOPosix
import StallMonitorNIO
import StallMonitorTesting
import Testing

/// The trait as users write it: these tests pass only if it records nothing for quiet work.
@Suite(.stallBudget(.milliseconds(100)))
struct StallBudgetAttributeTests {
    @Test func aSuiteBudgetAppliesToEachTest() throws {
        let scope = try #require(StallBudget.current)
        #expect(scope.budget.budget == .milliseconds(100))
        let worker = try ResidentLoopThread(name: "suite-quiet", monitor: StallBudget.configuration())
        defer { worker.stop() }
        #expect(try worker.performAndWait { "quiet" } == "quiet")
    }

    @Test(.stallBudget(.milliseconds(300)))
    func aTestsOwnBudgetReplacesTheSuites() throws {
        let scope = try #require(StallBudget.current)
        #expect(scope.budget.budget == .milliseconds(300))
        #expect(try StallBudget.configuration().threshold == .milliseconds(300))
    }

    @Test(
        .stallBudget(.milliseconds(100)) {
            try StallMonitor.start($0, eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
        })
    func servesWithoutStalling() async throws {
        let scope = try #require(StallBudget.current)
        #expect(scope.watchingMonitors.first?.watchedLoops.first?.kind == StallMonitor.nioEventLoopKind)
        #expect(try await MultiThreadedEventLoopGroup.singleton.next().submit { 21 * 2 }.get() == 42)
    }
}
