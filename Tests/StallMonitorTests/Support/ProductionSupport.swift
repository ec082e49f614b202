import Foundation
import Glibc
import StallMonitor
import StallReportKit

/// Work for the production-hardening tests: stalls with a deterministic stack, and stalls inside
/// the C library's allocator, loader and process spawning. Every function is `@inline(never)`.
enum ProductionWork {
    /// Spins for `milliseconds` in a loop that calls nothing between clock reads (every ~0.1 ms),
    /// so nearly every sample's leaf is this function and repeated stalls get one fingerprint.
    @inline(never)
    static func spinWithoutCallsForRateLimit(milliseconds: Int) {
        let end = Kernel.monotonicNanoseconds() + UInt64(milliseconds) * 1_000_000
        var sink: UInt64 = 1
        repeat {
            for value in 0..<200_000 { sink = sink &* 6_364_136_223_846_793_005 &+ UInt64(value) }
        } while Kernel.monotonicNanoseconds() < end
        if sink == 42 { print("", terminator: "") }
    }

    /// Allocates, touches and frees blocks of mixed sizes (arena-sized and mmap-sized) for
    /// `milliseconds`; returns how many blocks it allocated.
    @inline(never)
    static func allocateAndFreeInMalloc(milliseconds: Int) -> Int {
        let end = Kernel.monotonicNanoseconds() + UInt64(milliseconds) * 1_000_000
        let sizes = [24, 1_000, 64 << 10, 120 << 10, 1 << 20, 4 << 20]
        var count = 0
        var held: [UnsafeMutableRawPointer?] = Array(repeating: nil, count: 64)
        repeat {
            let slot = count % held.count
            free(held[slot])
            let size = sizes[count % sizes.count]
            let block = malloc(size)
            if let block { memset(block, Int32(count & 0xff), min(size, 64 << 10)) }
            held[slot] = block
            count += 1
        } while Kernel.monotonicNanoseconds() < end
        for block in held { free(block) }
        return count
    }

    /// Calls `dl_iterate_phdr` with a callback that spins for `milliseconds` in its first call
    /// (so the loader's lock is held all that time). Returns how long the call took (ms).
    @inline(never)
    static func spinInsideDlIteratePhdr(milliseconds: Int) -> Double {
        typealias Callback = @convention(c) (UnsafeMutableRawPointer?, Int, UnsafeMutableRawPointer?) -> Int32
        typealias Iterate = @convention(c) (Callback, UnsafeMutableRawPointer?) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "dl_iterate_phdr") else { return -1 }
        let iterate = unsafeBitCast(symbol, to: Iterate.self)
        var duration = milliseconds
        let start = Kernel.monotonicNanoseconds()
        _ = withUnsafeMutablePointer(to: &duration) { pointer in
            iterate(
                { _, _, data in
                    ProductionWork.spinInsideLoaderCallback(milliseconds: data!.load(as: Int.self))
                    return 1  // stop after the first image
                }, UnsafeMutableRawPointer(pointer))
        }
        return Double(Kernel.monotonicNanoseconds() - start) / 1e6
    }

    /// The callback's body: spins while `dl_iterate_phdr` holds the loader lock.
    @inline(never)
    static func spinInsideLoaderCallback(milliseconds: Int) {
        spinWithoutCallsForRateLimit(milliseconds: milliseconds)
    }

    /// Loads and unloads `library` (RTLD_NOW | RTLD_LOCAL) for `milliseconds`; returns the
    /// number of successful dlopen calls.
    @inline(never)
    static func loadAndUnloadInDlopen(_ library: String, milliseconds: Int) -> Int {
        let end = Kernel.monotonicNanoseconds() + UInt64(milliseconds) * 1_000_000
        var loaded = 0
        repeat {
            if let handle = dlopen(library, RTLD_NOW | RTLD_LOCAL) {
                loaded += 1
                dlclose(handle)
            }
        } while Kernel.monotonicNanoseconds() < end
        return loaded
    }

    /// A shared library that exists here and is not loaded by the test process yet, so that
    /// dlopen/dlclose really map and unmap it; nil when none of the candidates qualifies.
    static func unloadedLibrary() -> String? {
        let candidates = ["libanl.so.1", "libutil.so.1", "libnss_dns.so.2", "libBrokenLocale.so.1", "libmemusage.so"]
        return candidates.first { name in
            // RTLD_NOLOAD: a handle only when it is already loaded.
            if let handle = dlopen(name, RTLD_NOW | RTLD_NOLOAD) {
                dlclose(handle)
                return false
            }
            guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else { return false }
            dlclose(handle)
            return true
        }
    }

    /// Spawns `/bin/true` with `posix_spawn` and reaps it, again and again for `milliseconds`.
    /// Returns (spawned, exited with status 0).
    @inline(never)
    static func spawnTrueRepeatedly(milliseconds: Int) -> (spawned: Int, succeeded: Int) {
        let end = Kernel.monotonicNanoseconds() + UInt64(milliseconds) * 1_000_000
        let path = strdup("/bin/true")!
        defer { free(path) }
        var spawned = 0
        var succeeded = 0
        repeat {
            var pid: pid_t = 0
            var argv: [UnsafeMutablePointer<CChar>?] = [path, nil]
            guard posix_spawn(&pid, path, nil, nil, &argv, environ) == 0 else { continue }
            spawned += 1
            var status: Int32 = 0
            var result: pid_t
            repeat { result = waitpid(pid, &status, 0) } while result < 0 && errno == EINTR
            if result == pid && exitedNormally(status, code: 0) { succeeded += 1 }
        } while Kernel.monotonicNanoseconds() < end
        return (spawned, succeeded)
    }
}

/// Whether a `waitpid` status says the child exited (not killed) with `code`.
func exitedNormally(_ status: Int32, code: Int32) -> Bool {
    (status & 0x7f) == 0 && ((status >> 8) & 0xff) == code
}

/// Waits for child `pid` with a deadline (polling `waitpid(WNOHANG)`); kills it with SIGKILL
/// when the deadline passes. Returns its status, or nil when it had to be killed.
func waitForChild(_ pid: pid_t, timeout: Duration = .seconds(5)) -> Int32? {
    var status: Int32 = 0
    let exited = waitUntil(timeout: timeout) { waitpid(pid, &status, WNOHANG) == pid }
    if exited { return status }
    kill(pid, SIGKILL)
    _ = waitUntil(timeout: .seconds(5)) { waitpid(pid, &status, WNOHANG) == pid }
    return nil
}

extension StallReport.Sampling {
    /// Samples that were accounted for: taken, timed out or skipped for a reason.
    var accountedFor: Int { taken + timedOut + skipped.values.reduce(0, +) }
}

/// The permission bits of a file or directory (`stat`), nil when it does not exist.
func permissionBits(_ url: URL) -> Int? {
    var info = stat()
    guard stat(url.path, &info) == 0 else { return nil }
    return Int(info.st_mode & 0o7777)
}
