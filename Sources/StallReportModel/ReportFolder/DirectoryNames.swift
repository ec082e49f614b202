#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The entry names of one directory (without `.` and `..`), read with `readdir` into one byte
/// buffer rather than one string each, so that a directory of 100,000 reports is listed in a few
/// megabytes. ``sorted()`` gives them in the order of Swift's `String` comparison. The one
/// `readdir` loop of the monitor and of `stallreport` (see ``ReportFolder/names()``).
package struct DirectoryNames: Sendable {
    private var bytes: [UInt8] = []
    private var starts: [Int] = []
    private var allASCII = true

    /// Reads the directory; nil when it cannot be opened or read.
    package init?(_ path: String) {
        guard let handle = opendir(path) else { return nil }
        defer { closedir(handle) }
        errno = 0
        while let entry = readdir(handle) {
            let start = bytes.count
            for byte in CString.direntName(entry) as UnsafeRawBufferPointer {
                if byte >= 0x80 { allASCII = false }
                bytes.append(byte)
            }
            let length = bytes.count - start
            let isDot = length == 1 && bytes[start] == UInt8(ascii: ".")
            let isDotDot = length == 2 && bytes[start] == UInt8(ascii: ".") && bytes[start + 1] == UInt8(ascii: ".")
            if isDot || isDotDot {
                bytes.removeLast(length)
            } else {
                starts.append(start)
            }
        }
        guard errno == 0 else { return nil }
    }

    private func name(_ index: Int) -> ArraySlice<UInt8> {
        bytes[starts[index]..<starts[index] + length(index)]
    }

    /// The byte count of name `index`.
    private func length(_ index: Int) -> Int {
        (index + 1 < starts.count ? starts[index + 1] : bytes.count) - starts[index]
    }

    /// The names, sorted as `String`s sort (byte order when every name is ASCII), one at a time.
    package func sorted() -> LazyNames {
        var order = Array(starts.indices)
        if allASCII {
            // memcmp over the one buffer: a generic comparison of two slices, unspecialized in a
            // debug build, took 4 s to sort 2,200 names under AddressSanitizer (on the writer's
            // start, before its first flush).
            bytes.withUnsafeBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return }
                order.sort { left, right in
                    let (leftStart, leftCount) = (starts[left], length(left))
                    let (rightStart, rightCount) = (starts[right], length(right))
                    let order = memcmp(base + leftStart, base + rightStart, min(leftCount, rightCount))
                    return order != 0 ? order < 0 : leftCount < rightCount
                }
            }
        } else {
            let strings = order.map { String(decoding: name($0), as: UTF8.self) }
            order.sort { strings[$0] < strings[$1] }
        }
        return LazyNames(names: self, order: order)
    }

    /// Names in a given order, each made a `String` only when reached.
    package struct LazyNames: Sequence, IteratorProtocol {
        let names: DirectoryNames
        let order: [Int]
        var position = 0

        /// The next name, nil after the last.
        package mutating func next() -> String? {
            guard position < order.count else { return nil }
            defer { position += 1 }
            return String(decoding: names.name(order[position]), as: UTF8.self)
        }
    }
}
