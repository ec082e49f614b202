/// File paths stored compactly: each directory's path once, and the file names of all entries
/// in one byte buffer. About 8 bytes plus the name per file instead of a `String` allocation for
/// each full path, so that listing 100,000 reports does not make the reader's memory grow with
/// them. Paths are built again on demand.
struct FileList: Sendable {
    private var directories: [String] = []
    private var names: [UInt8] = []
    private var starts: [UInt32] = []
    private var directoryOfEntry: [UInt32] = []

    /// Number of entries.
    var count: Int { starts.count }

    /// Adds a directory prefix (ending in `/`, or empty for paths given whole); returns its number.
    mutating func addDirectory(_ prefix: String) -> Int {
        directories.append(prefix)
        return directories.count - 1
    }

    /// Adds the file `name` in directory number `directory`.
    mutating func append(name: String, directory: Int) {
        starts.append(UInt32(names.count))
        directoryOfEntry.append(UInt32(directory))
        names.append(contentsOf: name.utf8)
    }

    /// The path of entry `index`.
    func path(at index: Int) -> String {
        let end = index + 1 < starts.count ? Int(starts[index + 1]) : names.count
        let name = names[Int(starts[index])..<end].withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
        return directories[Int(directoryOfEntry[index])] + name
    }

    /// The entries without those at `removed` (indices), in the same order.
    func removing(_ removed: Set<Int>) -> FileList {
        var kept = FileList()
        kept.directories = directories
        for index in 0..<count where !removed.contains(index) {
            let end = index + 1 < starts.count ? Int(starts[index + 1]) : names.count
            kept.starts.append(UInt32(kept.names.count))
            kept.directoryOfEntry.append(directoryOfEntry[index])
            kept.names.append(contentsOf: names[Int(starts[index])..<end])
        }
        return kept
    }

    /// Every path, as strings.
    var paths: [String] { (0..<count).map(path(at:)) }
}
