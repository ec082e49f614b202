import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension ReportFolder {
    /// Why the directory cannot be used; `reason` is one line for people.
    package struct Problem: Error, Sendable {
        /// The line that says what is wrong.
        package var reason: String
    }

    /// Creates the directory (and missing parents) with mode 0700. With the C library's
    /// `stat`/`mkdir`: Foundation's `FileManager` paths were a good part of the code pages an
    /// idle monitor touched.
    package func prepare() throws(Problem) {
        var status = stat()
        if stat(path, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFDIR else { throw Problem(reason: "exists and is not a directory") }
            return
        }
        // Each missing component from the top, as `mkdir -p -m 0700` does.
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += prefix.isEmpty || prefix.hasSuffix("/") ? String(component) : "/" + component
            if stat(prefix, &status) == 0 {
                guard status.st_mode & S_IFMT == S_IFDIR else {
                    throw Problem(reason: "\(prefix) exists and is not a directory")
                }
                continue
            }
            if mkdir(prefix, 0o700) == 0 {
                chmod(prefix, 0o700)  // whatever the umask
                continue
            }
            let code = errno
            // Created by another process meanwhile: fine.
            guard code == EEXIST else {
                throw Problem(reason: "cannot create \(prefix): \(CString.errorMessage(code))")
            }
        }
    }

    /// Creates the directory when missing (see ``prepare()``), then checks that this process can
    /// create files in it: it is a directory (not a symbolic link to nothing, not a file), and
    /// writable and searchable with the process's effective ids on a writable file system.
    package func prepareUsable() throws(Problem) {
        try prepare()
        var status = stat()
        guard stat(path, &status) == 0 else {
            let code = errno
            if lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFLNK {
                throw Problem(
                    reason:
                        "is a symbolic link to \(Self.linkTarget(path) ?? "?"), which cannot be used: \(CString.errorMessage(code))"
                )
            }
            throw Problem(reason: CString.errorMessage(code))
        }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw Problem(reason: "is not a directory") }
        guard faccessat(AT_FDCWD, path, W_OK | X_OK, AT_EACCESS) == 0 else {
            let code = errno
            throw Problem(
                reason: "this process (uid \(geteuid())) cannot create files in it: \(CString.errorMessage(code))")
        }
    }

    /// The target of symbolic link `path`, nil when it cannot be read.
    private static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
