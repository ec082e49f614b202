import Foundation

/// Mounts for the hostile-disk tests (root only): a tiny tmpfs that fills up (ENOSPC) and a
/// read-only bind mount (EROFS). As root, `chmod` does not stop writes, so these are the honest
/// ways to make a directory unwritable for the monitor. Every mount is undone by `unmount()`.
struct ScratchMount {
    let path: String

    /// Whether this process may mount (root with CAP_SYS_ADMIN, `mount` present); checked once.
    static let available: Bool = {
        guard getuid() == 0 else { return false }
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent(
            "StallMonitorTests-mount-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: probe) }
        guard (try? FileManager.default.createDirectory(at: probe, withIntermediateDirectories: true)) != nil,
            let mount = try? tmpfs(at: probe, size: "16k")
        else { return false }
        mount.unmount()
        return true
    }()

    /// Mounts a tmpfs of `size` (e.g. "64k") at `directory` (which must exist).
    static func tmpfs(at directory: URL, size: String) throws -> ScratchMount {
        try run(["-t", "tmpfs", "-o", "size=\(size),mode=0700", "tmpfs", directory.path])
        return ScratchMount(path: directory.path)
    }

    /// Bind-mounts `directory` onto itself read-only.
    static func readOnlyBind(_ directory: URL) throws -> ScratchMount {
        try run(["--bind", directory.path, directory.path])
        let mount = ScratchMount(path: directory.path)
        do {
            try run(["-o", "remount,bind,ro", directory.path])
        } catch {
            mount.unmount()
            throw error
        }
        return mount
    }

    /// Bind-mounts file `source` onto file `target` (which must exist): `target` is then a mount
    /// point, which `unlink` refuses with EBUSY, also to root.
    static func bindFile(_ source: URL, onto target: URL) throws -> ScratchMount {
        try run(["--bind", source.path, target.path])
        return ScratchMount(path: target.path)
    }

    /// Undoes the mount (lazily, so a file still open cannot keep it).
    func unmount() {
        try? Self.run(["-l", path], tool: "/usr/bin/umount")
    }

    private static func run(_ arguments: [String], tool: String = "/usr/bin/mount") throws {
        let process = Process()
        process.executableURL = URL(
            fileURLWithPath: FileManager.default.fileExists(atPath: tool)
                ? tool : "/bin/" + (tool as NSString).lastPathComponent)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        guard waitUntil(timeout: .seconds(10), { !process.isRunning }) else {
            process.terminate()
            throw TestTimeout(what: "\(tool) \(arguments)")
        }
        guard process.terminationStatus == 0 else {
            throw MountFailed(arguments: arguments, status: process.terminationStatus)
        }
    }
}

/// A mount command failed.
struct MountFailed: Error {
    var arguments: [String]
    var status: Int32
}

/// A created directory of the test's own with a tmpfs of `size` (e.g. "256k") mounted on it, to
/// fill up; unmounted and removed when `body` returns or throws.
func withTmpfsDirectory<T>(size: String, label: String = #function, _ body: (ReportDirectory) throws -> T) throws -> T {
    try withCreatedDirectory(label: label) { root in
        let mount = try ScratchMount.tmpfs(at: root.url, size: size)
        defer { mount.unmount() }
        return try body(root)
    }
}
