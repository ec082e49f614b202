import CStallMonitor

/// The process-wide sampling signal handler seen from Swift: install and uninstall (reference
/// counted across monitors), and one sampling request at a time across every watchdog.
enum StackSampler {
    /// Result of one request.
    enum Outcome {
        case stack([UInt], truncated: Bool)
        case timedOut
        case busy
        case unavailable
        case sendFailed
    }

    /// Serializes requests of several watchdogs; held at most for one request's deadline.
    private static let requestLock = Locked<Void>(())

    /// Installs the handler; returns the signal in use.
    static func install(signal: Int32?) throws(StallMonitorError) -> Int32 {
        var message = [CChar](repeating: 0, count: 256)
        let result = CStallMonitor_sampler_install(signal ?? 0, &message, message.count)
        guard result > 0 else {
            throw .signalUnavailable(String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return result
    }

    /// Drops one installation; the last restores the previous signal disposition.
    static func uninstall() {
        CStallMonitor_sampler_uninstall()
    }

    /// Whether libunwind is loaded, and why not.
    static func unwinderStatus() -> (available: Bool, note: String?) {
        var note = [CChar](repeating: 0, count: 256)
        let available = CStallMonitor_sampler_unwinder_available(&note, note.count) != 0
        return (available, available ? nil : String(decoding: note.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// Asks thread `tid` for its stack, waiting at most `timeout` nanoseconds.
    static func sample(tid: Int32, timeout: UInt64, maxFrames: Int, into buffer: inout [UInt]) -> Outcome {
        requestLock.withLock { _ in
            var count: Int32 = 0
            var truncated: Int32 = 0
            let capacity = min(maxFrames, buffer.count)
            let result = buffer.withUnsafeMutableBufferPointer { frames in
                CStallMonitor_sampler_sample(tid, timeout, frames.baseAddress, Int32(capacity), &count, &truncated)
            }
            switch result {
            case CStallMonitorSampleOK: return .stack(Array(buffer[0..<Int(count)]), truncated: truncated != 0)
            case CStallMonitorSampleTimedOut: return .timedOut
            case CStallMonitorSampleBusy: return .busy
            case CStallMonitorSampleSendFailed: return .sendFailed
            default: return .unavailable
            }
        }
    }
}
