#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Decoding of C strings: NUL-terminated buffers, fixed-size `char` arrays imported as tuples,
/// and `errno` messages. Shared by the monitor and the readers.
package enum CString {
    /// The UTF-8 text before the first NUL of `buffer`.
    package static func decode(_ buffer: [CChar]) -> String {
        buffer.withUnsafeBytes { decode(bytes: $0) }
    }

    /// The UTF-8 text before the first NUL of a fixed-size C array (imported as a tuple), such as
    /// `utsname.release` or `dirent.d_name`.
    package static func decode<Array>(fixed array: Array) -> String {
        withUnsafeBytes(of: array) { decode(bytes: $0) }
    }

    /// The UTF-8 text before the first NUL of `bytes` (all of them when there is none).
    package static func decode(bytes: UnsafeRawBufferPointer) -> String {
        String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// The name of a directory entry that `readdir` returned, read up to its NUL only. Loading
    /// `entry.pointee.d_name` copies the whole fixed-size array, but the kernel packs entries by
    /// the length of their names: the last one in `readdir`'s buffer may end before the array
    /// would, and the copy then reads past the buffer (AddressSanitizer reports it).
    package static func direntName(_ entry: UnsafePointer<dirent>) -> UnsafeRawBufferPointer {
        let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        let name = (UnsafeRawPointer(entry) + offset).assumingMemoryBound(to: CChar.self)
        return UnsafeRawBufferPointer(start: name, count: strlen(name))
    }

    /// ``direntName(_:)`` as a string.
    package static func direntName(_ entry: UnsafePointer<dirent>) -> String {
        String(decoding: direntName(entry) as UnsafeRawBufferPointer, as: UTF8.self)
    }

    /// The system's message for error number `code` (`strerror`).
    package static func errorMessage(_ code: Int32) -> String {
        strerror(code).map { String(cString: $0) } ?? "error \(code)"
    }
}
