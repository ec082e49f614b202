import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Report paths given on the command line that do not exist (nor lead anywhere, for a dangling
/// link). Such a path is always an error with its own exit status, `--allow-empty` or not: a typo
/// in a CI script must not pass as "no stalls". The other paths are still read and the output
/// still written; the error comes last.
enum MissingPaths {
    /// The paths among `paths` that do not exist, in the order given.
    static func among(_ paths: [String]) -> [String] {
        paths.filter { path in
            var st = stat()
            return stat(path, &st) != 0 && (errno == ENOENT || errno == ENOTDIR)
        }
    }

    /// Says `error: <path> does not exist` (for each) and returns exit status 3 to throw.
    static func failure(_ missing: [String]) -> ExitCode {
        let list = missing.joined(separator: ", ")
        let verb = missing.count == 1 ? "does" : "do"
        Output.note(
            "error: \(list) \(verb) not exist (check the path; --allow-empty only accepts an existing directory without reports)"
        )
        return ExitCode(ExitStatus.missingPath)
    }
}
