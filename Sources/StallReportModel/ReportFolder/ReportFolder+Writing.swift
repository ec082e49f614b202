import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension ReportFolder {
    /// Why a write failed: the path tried last and ``AtomicFileWriter``'s failure.
    package struct WriteFailure: Error, Sendable {
        /// The path the failed write was for.
        package var path: String
        /// One line for people.
        package var reason: String
    }

    /// How many other names a new file tries when its name is taken by a file that is not ours
    /// (another process's, or a link someone planted at a name they could predict).
    package static let nameAttempts = 16

    /// Writes `data` under `name` with ``AtomicFileWriter`` (mode 0600): `replacing` a file this
    /// process wrote before (`rename`), else as a new file (`link`, which never replaces nor writes
    /// through what is there). A new file whose name is taken goes under the next of up to
    /// ``nameAttempts`` names from `nextName` (nil: no other name, fail). Returns the path and the
    /// name used.
    @discardableResult
    package func write(
        _ data: Data, name: String, replacing: Bool,
        nextName: () -> String? = { nil }
    ) throws(WriteFailure) -> (path: String, name: String) {
        try write(name: name, replacing: replacing, nextName: nextName) {
            path, existing throws(AtomicFileWriter.Failure) in
            try AtomicFileWriter.write(data, to: path, mode: 0o600, existing: existing)
        }
    }

    /// ``write(_:name:replacing:nextName:)`` for bytes (the session record: no `Data` on an idle
    /// monitor's path). With `keepingOpen`, also returns a descriptor of the file written (see
    /// ``AtomicFileWriter/write(bytes:to:mode:existing:keepingOpen:)``; the caller closes it).
    @discardableResult
    package func write(
        bytes: [UInt8], name: String, replacing: Bool, keepingOpen: Bool = false,
        nextName: () -> String? = { nil }
    ) throws(WriteFailure) -> (path: String, name: String, descriptor: Int32?) {
        var descriptor: Int32?
        let used = try write(name: name, replacing: replacing, nextName: nextName) {
            path, existing throws(AtomicFileWriter.Failure) in
            descriptor = try AtomicFileWriter.write(
                bytes: bytes, to: path, mode: 0o600, existing: existing, keepingOpen: keepingOpen)
        }
        return (used.path, used.name, descriptor)
    }

    /// The loop over names of both writes.
    private func write(
        name: String, replacing: Bool, nextName: () -> String?,
        _ writeFile: (String, AtomicFileWriter.Existing) throws(AtomicFileWriter.Failure) -> Void
    )
        throws(WriteFailure) -> (path: String, name: String)
    {
        let existing: AtomicFileWriter.Existing = replacing ? .replace : .fail
        var name = name
        var attempts = 0
        while true {
            let final = path(of: name)
            do {
                try writeRecreatingDirectory(final, existing, writeFile)
                return (final, name)
            } catch let error where error.code == EEXIST && !replacing && attempts < Self.nameAttempts {
                guard let next = nextName() else { throw WriteFailure(path: final, reason: error.description) }
                attempts += 1
                name = next
            } catch {
                throw WriteFailure(path: final, reason: error.description)
            }
        }
    }

    /// One write; when the directory was removed while the monitor ran, it is created again
    /// (0700) and the write tried once more.
    private func writeRecreatingDirectory(
        _ final: String, _ existing: AtomicFileWriter.Existing,
        _ writeFile: (String, AtomicFileWriter.Existing) throws(AtomicFileWriter.Failure) -> Void
    )
        throws(AtomicFileWriter.Failure)
    {
        do {
            try writeFile(final, existing)
        } catch let error where error.code == ENOENT {
            try? prepare()
            try writeFile(final, existing)
        }
    }

    /// What ``remove(_:)`` did.
    package enum Removal: Sendable, Equatable {
        /// The file was removed.
        case removed
        /// There was no such file (someone else removed it first).
        case alreadyGone
        /// `unlink` failed with this `errno`.
        case failed(Int32)
    }

    /// Removes file `name` (one this process wrote, or one the quota may delete).
    @discardableResult
    package func remove(_ name: String) -> Removal {
        if unlink(path(of: name)) == 0 { return .removed }
        let code = errno
        return code == ENOENT ? .alreadyGone : .failed(code)
    }
}
