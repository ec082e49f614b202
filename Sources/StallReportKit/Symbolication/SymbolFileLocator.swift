import Foundation

/// Finds the file to symbolicate an image of a report against: a split debug file or an unstripped
/// copy of the binary, checked by GNU build ID.
///
/// Candidates, in order: in each debug directory `.build-id/xx/rest.debug` (the layout of
/// `/usr/lib/debug` and of `objcopy --only-keep-debug` set-ups), then `<name>.debug` and `<name>`
/// (the image's file name); then the path recorded in the report. A candidate is used only when its
/// build ID equals the recorded one; an image recorded without a build ID is matched by path and
/// name alone. Debug directories come first: they are where the user put the richer files.
public struct SymbolFileLocator: Sendable {
    /// Where a file was found.
    package enum Source: String, Sendable, Equatable {
        /// `<dir>/.build-id/xx/rest.debug` in a debug directory.
        case debugDirectoryBuildID = "debug directory (by build ID)"
        /// `<dir>/<name>` or `<dir>/<name>.debug` in a debug directory.
        case debugDirectoryName = "debug directory (by file name)"
        /// The path recorded in the report.
        case recordedPath = "recorded path"
    }

    /// A usable file.
    package struct Match: Sendable, Equatable {
        /// Path of the file.
        package var path: String
        /// How it was found.
        package var source: Source
    }

    /// Directories searched before the recorded path.
    package var debugDirectories: [String]

    /// Creates a locator.
    public init(debugDirectories: [String]) {
        self.debugDirectories = debugDirectories
    }

    /// The file for `image`, or why there is none (one line).
    package func locate(_ image: StallReport.Image) -> Result<Match, LocateError> {
        var mismatches: [String] = []
        for (path, source) in candidates(for: image) {
            guard FileManager.default.isReadableFile(atPath: path) else { continue }
            guard let expected = image.buildID?.lowercased() else { return .success(Match(path: path, source: source)) }
            let actual = ELFBuildID.read(path: path)
            if actual == expected { return .success(Match(path: path, source: source)) }
            mismatches.append("\(path) has build ID \(actual ?? "none")")
        }
        return .failure(LocateError(image: image, mismatches: mismatches))
    }

    /// Every candidate path, in order.
    package func candidates(for image: StallReport.Image) -> [(String, Source)] {
        let name = (image.path as NSString).lastPathComponent
        var result: [(String, Source)] = []
        for directory in debugDirectories {
            let base = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
            if let id = image.buildID?.lowercased(), id.count > 2 {
                result.append(("\(base)/.build-id/\(id.prefix(2))/\(id.dropFirst(2)).debug", .debugDirectoryBuildID))
            }
            if !name.isEmpty {
                result.append(("\(base)/\(name).debug", .debugDirectoryName))
                result.append(("\(base)/\(name)", .debugDirectoryName))
            }
        }
        if image.path.hasPrefix("/") { result.append((image.path, .recordedPath)) }
        return result
    }
}

/// Why no file was found for an image.
package struct LocateError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The image.
    package var image: StallReport.Image
    /// Candidates that exist but have another build ID.
    package var mismatches: [String]

    /// One line for people.
    package var description: String {
        let id = image.buildID.map { "build ID \($0)" } ?? "no build ID"
        if mismatches.isEmpty { return "no file for \(image.path) (\(id)) at its path or in the debug directories" }
        return "no file for \(image.path) with \(id): " + mismatches.joined(separator: "; ")
    }
}
