import Foundation

/// The package's root folder, for tests that read files kept in the repository (schemas,
/// example configs, fuzz regressions) wherever the test file itself sits.
public enum PackageRoot {
    /// The nearest folder above this source file that holds a `Package.swift`.
    public static let url: URL = {
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while folder.path != "/",
            !FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path)
        {
            folder = folder.deletingLastPathComponent()
        }
        return folder
    }()
}
