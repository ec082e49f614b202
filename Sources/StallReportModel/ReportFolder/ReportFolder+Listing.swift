import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension ReportFolder {
    /// The directory's entry names (one `readdir` loop: ``DirectoryNames``); nil when it cannot be
    /// listed.
    package func names() -> DirectoryNames? {
        DirectoryNames(path)
    }

    /// The regular files among the names `include` accepts, with their sizes; never a symbolic
    /// link, FIFO or other special file, and a file gone meanwhile is left out. Nil when the
    /// directory cannot be listed.
    package func regularFiles(where include: (String) -> Bool) -> [String: Int]? {
        guard let names = names() else { return nil }
        var sizes: [String: Int] = [:]
        for name in names.sorted() where include(name) {
            var info = stat()
            // gone meanwhile
            guard fstatat(AT_FDCWD, path(of: name), &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            guard info.st_mode & S_IFMT == S_IFREG else { continue }
            sizes[name] = Int(info.st_size)
        }
        return sizes
    }
}
