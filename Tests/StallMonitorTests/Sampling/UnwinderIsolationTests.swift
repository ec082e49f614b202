import Foundation
import Glibc
import StallMonitor
import Testing

@Suite("The process's own unwinder stays untouched", .serialized)
struct UnwinderIsolationTests {
    /// dladdr(3); `Dl_info` (four pointers: file name, base, symbol name, symbol address) is not
    /// imported into Swift without _GNU_SOURCE, so it is passed as an array of pointers.
    private typealias DladdrFunction =
        @convention(c) (UnsafeRawPointer?, UnsafeMutablePointer<UnsafeRawPointer?>) -> Int32
    private typealias BacktraceFunction =
        @convention(c) (UnsafeMutablePointer<UnsafeMutableRawPointer?>, Int32) -> Int32

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

    /// The image of a sanitizer runtime in this process (ASan or TSan, linked into the test
    /// executable by `swift test --sanitize=…`), or nil. Such a runtime intercepts `backtrace` and
    /// the `_Unwind_*` entry points itself, so under `Scripts/sanitize` they resolve into it.
    private static var sanitizerRuntimeImage: String? {
        imageDefining("__asan_init") ?? imageDefining("__tsan_init")
    }

    /// Whether `image` is the one expected for an entry point: `expected`, or the sanitizer runtime.
    private static func isExpected(_ image: String?, _ expected: String) -> Bool {
        guard let image else { return false }
        return image.contains(expected) || image == sanitizerRuntimeImage
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
        try withMonitoredLoop("unwind-check") { directory, loop, monitor in
            // 900 ms, so that a loaded machine that keeps the process off the CPUs for a few hundred
            // ms (seen under TSan) still leaves the watchdog time to sample it.
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 900) }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            #expect(monitor.statistics.samplesTaken > 0, "libunwind was loaded and used")

            for symbol in ["_Unwind_Backtrace", "_Unwind_RaiseException", "_Unwind_GetIP"] {
                let image = try #require(Self.imageDefining(symbol), "\(symbol) does not resolve")
                #expect(Self.isExpected(image, "libgcc_s"), "\(symbol) resolves into \(image)")
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

            #expect(
                Self.isExpected(Self.imageDefining("backtrace"), "libc.so"),
                "\(String(describing: Self.imageDefining("backtrace")))")
            #expect(Self.glibcBacktraceDepth() > 2)
            let onLoop = try loop.run { Self.glibcBacktraceDepth() }
            #expect(onLoop > 2)
        }
    }
}
