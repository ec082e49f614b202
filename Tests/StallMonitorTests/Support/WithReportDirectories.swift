/// Two report directories of the test's own, labelled `first` and `second` (not created: the
/// monitors create them); both are removed when `body` returns or throws.
func withReportDirectories<T>(
    _ first: String,
    _ second: String,
    _ body: (ReportDirectory, ReportDirectory) throws -> T
) rethrows -> T {
    let directories = (ReportDirectory(first), ReportDirectory(second))
    defer {
        directories.0.remove()
        directories.1.remove()
    }
    return try body(directories.0, directories.1)
}
