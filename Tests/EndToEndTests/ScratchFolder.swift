import Foundation

/// A path of the test's own under the temporary directory (`prefix`-UUID, not created: the host
/// program under test creates it); removed with what is in it when `body` returns or throws.
func withScratchFolder<T>(_ prefix: String, _ body: (URL) throws -> T) throws -> T {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    return try body(folder)
}
