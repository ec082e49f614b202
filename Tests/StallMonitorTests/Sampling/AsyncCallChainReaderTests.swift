import Foundation
import Testing

@testable import StallMonitor

/// The async call chain reader on the test's own task: from inside five nested async functions,
/// the chain read (as the watchdog reads another thread's, with process_vm_readv) must reach the
/// task's root, and with the thread's return addresses find the running async frame and name
/// every caller; a wrong task layout is refused, never followed.
@Suite("Async call chain reader", .serialized)
struct AsyncCallChainReaderTests {
    #if os(Linux) && arch(x86_64)
    static func reader() throws -> AsyncCallChainReader {
        let pool = try PoolLayout.learn().get()
        let layout = try AsyncTaskLayout.verify(activeTaskOffset: pool.activeTaskOffset).get()
        return AsyncCallChainReader(layout: layout, threads: pool)
    }

    static func bounds() -> SnapshotUnwinder.StackBounds? {
        Kernel.currentStackBounds().map { .init(low: $0.low, high: $0.high) }
    }

    @Test(
        "from five nested async functions: the running frame is found and the chain names the five callers, down to the root"
    )
    func nestedChain() async throws {
        let reader = try Self.reader()
        let outcome = await readerLevel1(reader)
        guard case .chain(let chain) = outcome else {
            Issue.record("no chain: \(outcome)")
            return
        }
        #expect(chain.complete)
        // Without frame records (an optimized test build) the chain starts at the job's start.
        #if DEBUG
        #expect(!chain.fromJobStart, "a debug build keeps the running async frame's context below its frame pointer")
        #endif
        if !chain.fromJobStart {
            #expect(chain.jobFrames != nil)
            MonitorProcess.shared.symbolicator.retain()
            defer { MonitorProcess.shared.symbolicator.release() }
            let names = chain.callers.map {
                MonitorProcess.shared.symbolicator.symbolicate([$0], images: ["async-chain-test"])[$0]?.name ?? "?"
            }
            for level in 1...4 {
                #expect(names.contains { $0.contains("readerLevel\(level)") }, "\(names)")
            }
            #expect(names.last?.hasPrefix("complete") == true, "\(names)")
        }
    }

    @Test("a task header that is not the runtime's task metadata is refused")
    func wrongLayoutIsRefused() async throws {
        var layout = try Self.reader().layout
        layout.taskMetadata &+= 8
        let reader = AsyncCallChainReader(layout: layout)
        let outcome = reader.read(
            threadPointer: Kernel.threadPointer(), stack: nil, physical: [], now: Kernel.monotonicNanoseconds())
        guard case .omitted(let omission) = outcome else {
            Issue.record("not refused: \(outcome)")
            return
        }
        #expect(omission.reason.contains("not an AsyncTask"))
    }

    @Test("the runtime's layout version is the one verified")
    func layoutVersion() {
        #expect((try? AsyncTaskLayout.verify(activeTaskOffset: 0).get()) != nil)
    }
    #endif
}

#if os(Linux) && arch(x86_64)
@inline(never) func readerLevel1(_ reader: AsyncCallChainReader) async -> AsyncChainOutcome {
    await readerLevel2(reader)
}
@inline(never) func readerLevel2(_ reader: AsyncCallChainReader) async -> AsyncChainOutcome {
    await readerLevel3(reader)
}
@inline(never) func readerLevel3(_ reader: AsyncCallChainReader) async -> AsyncChainOutcome {
    await readerLevel4(reader)
}
@inline(never) func readerLevel4(_ reader: AsyncCallChainReader) async -> AsyncChainOutcome {
    await readerLevel5(reader)
}
@inline(never) func readerLevel5(_ reader: AsyncCallChainReader) async -> AsyncChainOutcome {
    let physical = Thread.callStackReturnAddresses.map { UInt(truncating: $0) }
    return reader.read(
        threadPointer: Kernel.threadPointer(), stack: AsyncCallChainReaderTests.bounds(),
        physical: [0] + physical, now: Kernel.monotonicNanoseconds())
}
#endif
