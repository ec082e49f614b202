import Glibc
import StallReportModel

/// Keeps the session record's `aliveMs` current between rewrites: overwrites its fixed-width
/// digits in place, in the very file last written (a descriptor kept from that write, never the
/// name, which someone may have replaced since).
///
/// A mark is one `pwrite` of 12 bytes into the page cache: no new file, no `fsync`, nothing for
/// the quota or a reader to see but the digits. The kernel writes the page back on its own, and
/// the digits survive the process's death (SIGKILL included); only a crash of the machine loses
/// the marks since the last rewrite.
final class SessionAliveMark: Sendable {
    /// The record's file and where its digits start (nil: no record written yet, or stopped).
    private let target = Locked<(descriptor: Int32, offset: Int)?>(nil)

    /// Marks in the file of `descriptor` from now on (taking it over), whose digits start at
    /// `offset`; nil: marks go nowhere until the next retarget. Called by the writer after each
    /// rewrite of the record.
    func retarget(descriptor: Int32?, offset: Int?) {
        let next: (descriptor: Int32, offset: Int)?
        if let descriptor, let offset {
            next = (descriptor, offset)
        } else {
            if let descriptor { Glibc.close(descriptor) }
            next = nil
        }
        let previous = target.withLock { target in
            defer { target = next }
            return target
        }
        if let previous { Glibc.close(previous.descriptor) }
    }

    /// Overwrites the digits with `value`; false when there is no record or the write failed (the
    /// next rewrite carries the value anyway).
    @discardableResult
    func mark(_ value: AliveMilliseconds) -> Bool {
        let digits = Array(value.text.utf8)
        return target.withLock { target in
            guard let target else { return false }
            return digits.withUnsafeBytes { pwrite(target.descriptor, $0.baseAddress, $0.count, off_t(target.offset)) }
                == digits.count
        }
    }

    /// Stops marking and closes the file.
    func close() {
        retarget(descriptor: nil, offset: nil)
    }
}
