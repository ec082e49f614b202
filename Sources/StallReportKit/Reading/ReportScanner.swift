import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns command-line paths into the list of report files to read.
///
/// A file given by name is read whatever its extension (as a session record when it is named
/// `*.session`, as a blocking-calls report when it is named `blocking-*.json`, else as a stall
/// report). A directory is searched recursively for `*.json` report files (`blocking-*.json` kept
/// apart) and `*.session` session records (see ``SessionRecord``); entries whose name starts with `.` are skipped (hidden files and the monitor's
/// temporary files). Symbolic links are followed; a link that leads back into a directory being
/// walked is reported as a loop instead of being followed forever, and a file or directory reached
/// twice (through two links, or given twice) is read once. Results are sorted, so output does not
/// depend on directory order.
package struct ReportScanner: Sendable {
    /// What the scan found.
    package struct Result: Sendable, Equatable {
        /// Report files to read, in a stable order, each once.
        package var files: [String]
        /// Session record files (`*.session`) to read, in a stable order, each once.
        package var sessionFiles: [String] = []
        /// Blocking-calls reports (`blocking-*.json`, see ``BlockingCallsReport``), each once.
        package var blockingFiles: [String] = []
        /// Paths that could not be used, one line each.
        package var problems: [ReportProblem]
    }

    /// Deepest directory nesting walked before giving up on a branch.
    package var maxDirectoryDepth: Int
    /// Whether a directory argument that contains no `*.json` (nor `*.session`) file is reported as a problem.
    package var reportEmptyDirectories: Bool

    /// Creates a scanner.
    package init(maxDirectoryDepth: Int = 128, reportEmptyDirectories: Bool = true) {
        self.maxDirectoryDepth = maxDirectoryDepth
        self.reportEmptyDirectories = reportEmptyDirectories
    }

    private struct FileID: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    private struct State {
        var files = FileList()
        var sessionFiles: [String] = []
        var blockingFiles: [String] = []
        var problems: [ReportProblem] = []
        /// Files that may be reached more than once: given by name, reached through a link, or
        /// with several names (hard links). A file with one name found in a walked directory is
        /// looked up here but not added: it cannot be reached twice that way, so memory does not
        /// grow with the number of reports.
        var seenFiles: Set<FileID> = []
        /// Report entries of those files, by file.
        var repeatable: [FileID: Int] = [:]
        var seenDirectories: Set<FileID> = []
        var argumentDirectory = -1
    }

    /// Scans `paths` (files and/or directories).
    package func scan(_ paths: [String]) -> Result {
        let found = scanCompact(paths)
        return Result(
            files: found.files.paths, sessionFiles: found.sessionFiles, blockingFiles: found.blockingFiles,
            problems: found.problems)
    }

    /// What ``scanCompact(_:)`` found: report files in a ``FileList``.
    struct CompactResult: Sendable {
        var files: FileList
        var sessionFiles: [String]
        var blockingFiles: [String]
        var problems: [ReportProblem]
    }

    /// ``scan(_:)`` with the report files kept compactly.
    func scanCompact(_ paths: [String]) -> CompactResult {
        var state = State()
        state.argumentDirectory = state.files.addDirectory("")
        for path in paths {
            let before = state.files.count + state.sessionFiles.count + state.blockingFiles.count
            guard let info = statInfo(path, state: &state) else { continue }
            if info.isDirectory {
                // Given twice (or through a link to a directory already searched): read once, quietly.
                if state.seenDirectories.contains(info.id) { continue }
                walk(directory: path, id: info.id, ancestors: [], depth: 0, state: &state)
                if reportEmptyDirectories,
                    state.files.count + state.sessionFiles.count + state.blockingFiles.count == before
                {
                    state.problems.append(
                        ReportProblem(path: path, message: "no report files (*.json) found in this directory"))
                }
            } else if info.isRegular {
                if state.seenFiles.insert(info.id).inserted {
                    if SessionRecord.isSessionFileName(path) {
                        state.sessionFiles.append(path)
                    } else if BlockingCallsReport.isFileName(path) {
                        state.blockingFiles.append(path)
                    } else {
                        state.repeatable[info.id] = state.files.count
                        state.files.append(name: path, directory: state.argumentDirectory)
                    }
                }
            } else {
                state.problems.append(ReportProblem(path: path, message: "not a regular file or directory"))
            }
        }
        return CompactResult(
            files: Self.withoutRepeats(state), sessionFiles: state.sessionFiles, blockingFiles: state.blockingFiles,
            problems: state.problems)
    }

    /// The report files, each once: a file found by its one name in a directory and also given
    /// by name or through a link is kept where it came first.
    private static func withoutRepeats(_ state: State) -> FileList {
        guard !state.repeatable.isEmpty, state.files.count > state.repeatable.count else { return state.files }
        let repeatableEntries = Set(state.repeatable.values)
        var removed = Set<Int>()
        for index in 0..<state.files.count where !repeatableEntries.contains(index) {
            var st = stat()
            guard stat(state.files.path(at: index), &st) == 0 else { continue }
            let id = FileID(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
            if let other = state.repeatable[id] { removed.insert(max(index, other)) }
        }
        return removed.isEmpty ? state.files : state.files.removing(removed)
    }

    private struct Info {
        var id: FileID
        var isDirectory: Bool
        var isRegular: Bool
        var links: UInt64 = 1
    }

    /// `stat` (following links) with each failure turned into a problem line.
    /// With `quiet`, failures are not reported (for links that would not be reports anyway).
    private func statInfo(_ path: String, quiet: Bool = false, state: inout State) -> Info? {
        var st = stat()
        if stat(path, &st) == 0 {
            let type = st.st_mode & S_IFMT
            return Info(
                id: FileID(device: UInt64(st.st_dev), inode: UInt64(st.st_ino)), isDirectory: type == S_IFDIR,
                isRegular: type == S_IFREG,
                links: UInt64(st.st_nlink))
        }
        let code = errno
        if quiet { return nil }
        var message: String
        switch code {
        case ELOOP:
            message = "symbolic link loop (too many levels of symbolic links)"
        case ENOENT:
            var lst = stat()
            if lstat(path, &lst) == 0, (lst.st_mode & S_IFMT) == S_IFLNK {
                let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?"
                message = "dangling symbolic link (target \(target) does not exist)"
            } else {
                message = "no such file or directory"
            }
        default:
            message = "cannot access: \(CString.errorMessage(code))"
        }
        state.problems.append(ReportProblem(path: path, message: message))
        return nil
    }

    private func walk(directory: String, id: FileID, ancestors: Set<FileID>, depth: Int, state: inout State) {
        if ancestors.contains(id) {
            state.problems.append(
                ReportProblem(
                    path: directory,
                    message: "symbolic link loop: leads back to a directory that contains it; not followed"))
            return
        }
        // The same directory reached a second way (two links to it, or given twice): read once.
        guard state.seenDirectories.insert(id).inserted else { return }
        guard depth <= maxDirectoryDepth else {
            state.problems.append(
                ReportProblem(
                    path: directory, message: "directory nesting deeper than \(maxDirectoryDepth) levels; not searched")
            )
            return
        }
        guard let names = ReportFolder(path: directory).names() else {
            do {
                _ = try FileManager.default.contentsOfDirectory(atPath: directory)
                state.problems.append(ReportProblem(path: directory, message: "cannot read directory"))
            } catch {
                let reason = (error as NSError).localizedDescription
                state.problems.append(ReportProblem(path: directory, message: "cannot read directory: \(reason)"))
            }
            return
        }
        var inside = ancestors
        inside.insert(id)
        let base = directory.hasSuffix("/") ? directory : directory + "/"
        var directoryNumber: Int?
        for name in names.sorted() where !name.hasPrefix(".") {
            let path = base + name
            var lst = stat()
            guard lstat(path, &lst) == 0 else { continue }  // vanished while walking
            let isLink = (lst.st_mode & S_IFMT) == S_IFLNK
            let isSession = SessionRecord.isSessionFileName(name)
            let looksLikeReport = name.lowercased().hasSuffix(".json") || isSession
            let lstType = lst.st_mode & S_IFMT
            // Cheap skip of plain files that are not *.json, without following anything.
            if !isLink, lstType != S_IFDIR, !looksLikeReport { continue }
            // A link that is not named *.json only matters if it leads to a directory.
            // A plain file or directory: lstat said it all; a link is followed.
            let info =
                isLink
                ? statInfo(path, quiet: !looksLikeReport, state: &state)
                : Info(
                    id: FileID(device: UInt64(lst.st_dev), inode: UInt64(lst.st_ino)), isDirectory: lstType == S_IFDIR,
                    isRegular: lstType == S_IFREG, links: UInt64(lst.st_nlink))
            guard let info else { continue }
            if info.isDirectory {
                walk(directory: path, id: info.id, ancestors: inside, depth: depth + 1, state: &state)
            } else if looksLikeReport {
                if info.isRegular {
                    if isSession {
                        if state.seenFiles.insert(info.id).inserted { state.sessionFiles.append(path) }
                    } else if BlockingCallsReport.isFileName(name) {
                        if state.seenFiles.insert(info.id).inserted { state.blockingFiles.append(path) }
                    } else if isLink || info.links > 1 {
                        if state.seenFiles.insert(info.id).inserted {
                            state.repeatable[info.id] = state.files.count
                            if directoryNumber == nil { directoryNumber = state.files.addDirectory(base) }
                            state.files.append(name: name, directory: directoryNumber!)
                        }
                    } else if !state.seenFiles.contains(info.id) {
                        if directoryNumber == nil { directoryNumber = state.files.addDirectory(base) }
                        state.files.append(name: name, directory: directoryNumber!)
                    }
                } else {
                    state.problems.append(ReportProblem(path: path, message: "not a regular file"))
                }
            }
        }
    }
}
