import Foundation

/// The one owner of a report directory: the names of its files (``ReportFileName``), listing it
/// (``names()``, ``regularFiles(where:)``), whether a file's writer still runs
/// (``WriterLiveness``), atomic writes, replacements and removals (``write(_:name:replacing:nextName:)``,
/// ``remove(_:)``). The monitor's writer,
/// quota, stale sweep and session recorder and `stallreport`'s readers all go through it.
package struct ReportFolder: Sendable {
    /// The directory's path, read once: paths of files are built from it as strings (URL
    /// operations are code an idle monitor would otherwise touch for its session record).
    package let path: String

    /// The directory at `path`.
    package init(path: String) {
        self.path = path
    }

    /// The directory at `url`.
    package init(_ url: URL) {
        self.path = url.path
    }

    /// The directory as a file URL.
    package var url: URL { URL(fileURLWithPath: path, isDirectory: true) }

    /// The path of file `name` in the directory.
    package func path(of name: String) -> String {
        path.hasSuffix("/") ? path + name : path + "/" + name
    }
}
