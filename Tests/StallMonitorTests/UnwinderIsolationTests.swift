import Foundation
import Glibc
import StallMonitor
import Testing

@Suite("The process's own unwinder stays untouched", .serialized)
struct UnwinderIsolationTests {
    /// dladdr(3); `Dl_info` (four pointers: file name, base, symbol name, symbol address) is not
    /// imported into Swift without _GNU_SOURCE, so it is passed as an array of pointers.
    private typealias DladdrFunction = @convention(c) (UnsafeRawPointer?, UnsafeMutablePointer<UnsafeRawPointer?>) -> Int32
    private typealias BacktraceFunction = @convention(c) (UnsafeMutablePointer<UnsafeMutableRawPointer?>, Int32) -> Int32

    /// A function as the process resolves it (RTLD_DEFAULT).
    private static func resolve(_ symbol: String) -> UnsafeMutableRawPointer? {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), symbol)
    }

    /// The path of the image that defines `symbol` as the process resolves it (RTLD_DEFAULT).
    private static func imageDefining(_ symbol: String) -> String? {
        guard let address = resolve(symbol), let dladdrAddress = resolve("dladdr") else { return nil }
        let dladdr = unsafeBitCast(dladdrAddress, to: DladdrFunction.self)
        var info = [UnsafeRawPointer?](repeating: nil, count: 4)
        guard dladdr(address, &info) != 0, let path = info[0] else { return nil }
        return String(cString: path.assumingMemoryBound(to: CChar.self))
    }

    /// How many frames glibc's `backtrace()` finds from here.
    @inline(never)
    private static func glibcBacktraceDepth() -> Int32 {
        guard let address = resolve("backtrace") else { return -1 }
        let backtrace = unsafeBitCast(address, to: BacktraceFunction.self)
        var buffer = [UnsafeMutableRawPointer?](repeating: nil, count: 64)
        return backtrace(&buffer, Int32(buffer.count))
    }

    @Test("after a monitor started and sampled, _Unwind_Backtrace still comes from libgcc_s and backtrace() works")
    func unwinderIsNotHijacked() throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        let loop = try MonitoredLoopThread(name: "unwind-check")
        defer { loop.stop() }
        let monitor = try loop.startMonitor(directory.configuration())
        defer { monitor.stop() }
        try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 320) }
        #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
        #expect(monitor.statistics.samplesTaken > 0, "libunwind was loaded and used")

        for symbol in ["_Unwind_Backtrace", "_Unwind_RaiseException", "_Unwind_GetIP"] {
            let image = try #require(Self.imageDefining(symbol), "\(symbol) does not resolve")
            #expect(image.contains("libgcc_s"), "\(symbol) resolves into \(image)")
            #expect(!image.contains("libunwind"), "\(symbol) resolves into \(image)")
        }
        // libunwind was loaded RTLD_LOCAL: its entry points are not visible to the process.
        #if arch(x86_64)
        let libunwindSymbols = ["_ULx86_64_init_local2", "_ULx86_64_step", "_Ux86_64_getcontext"]
        #else
        let libunwindSymbols = ["_ULaarch64_init_local2", "_ULaarch64_step"]
        #endif
        for symbol in libunwindSymbols {
            #expect(Self.imageDefining(symbol) == nil, "\(symbol) is globally visible")
        }

        #expect(Self.imageDefining("backtrace")?.contains("libc.so") == true)
        #expect(Self.glibcBacktraceDepth() > 2)
        let onLoop = try loop.run { Self.glibcBacktraceDepth() }
        #expect(onLoop > 2)
    }
}
