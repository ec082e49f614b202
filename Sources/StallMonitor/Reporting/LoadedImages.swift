import CStallMonitor
import Glibc
import StallReportModel

/// A snapshot of the loaded ELF images, for mapping addresses to images and listing them in
/// reports with their build IDs.
struct LoadedImages {
    struct Entry {
        var path: String
        var start: UInt
        var end: UInt
        var bias: UInt
        var buildID: String?
        var isMainExecutable: Bool
        var isApp: Bool
    }

    /// Images in load order (the main executable first).
    let entries: [Entry]
    private let byStart: [Int]

    /// Takes a snapshot with `dl_iterate_phdr`.
    static func capture() -> LoadedImages {
        var list = CStallMonitorImageList()
        guard CStallMonitor_images_copy(&list) == 0 else { return LoadedImages(entries: []) }
        defer { CStallMonitor_images_free(&list) }
        var entries: [Entry] = []
        for index in 0..<Int(list.count) {
            let image = list.images[index]
            let path = image.path.map { String(cString: $0) } ?? ""
            let buildID = withUnsafeBytes(of: image.build_id) { bytes in
                bytes.prefix(Int(image.build_id_size)).map { byte in
                    let hex = String(byte, radix: 16)
                    return byte < 16 ? "0" + hex : hex
                }.joined()
            }
            entries.append(
                Entry(
                    path: path, start: image.start, end: image.end, bias: image.bias,
                    buildID: buildID.isEmpty ? nil : buildID, isMainExecutable: image.is_main != 0,
                    isApp: image.is_main != 0 || isAppImage(path: path, runtimeDirectory: swiftRuntimeDirectory)))
        }
        return LoadedImages(entries: entries)
    }

    init(entries: [Entry]) {
        self.entries = entries
        self.byStart = entries.indices.sorted { entries[$0].start < entries[$1].start }
    }

    /// Index of the image containing `address`.
    func index(containing address: UInt) -> Int? {
        var low = 0
        var high = byStart.count
        while low < high {
            let middle = (low + high) / 2
            if entries[byStart[middle]].start <= address { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        let candidate = byStart[low - 1]
        return address < entries[candidate].end ? candidate : nil
    }

    /// The images as report entries.
    var reportImages: [StallReport.Image] {
        entries.map {
            StallReport.Image(
                path: $0.path, loadAddress: ReportCoding.formatAddress($0.start),
                loadBias: ReportCoding.formatAddress($0.bias), buildID: $0.buildID,
                isMainExecutable: $0.isMainExecutable)
        }
    }

    /// App code is anything that is not in a system library directory, not the Swift runtime and
    /// not the kernel's vDSO.
    static func isAppImage(path: String, runtimeDirectory: String?) -> Bool {
        if path.isEmpty || path.hasPrefix("linux-vdso") || path.hasPrefix("linux-gate") { return false }
        if let runtimeDirectory, path.hasPrefix(runtimeDirectory) { return false }
        let systemPrefixes = [
            "/lib/", "/lib64/", "/lib32/", "/usr/lib/", "/usr/lib64/", "/usr/lib32/", "/usr/libexec/",
            "/usr/local/lib/swift",
        ]
        return !systemPrefixes.contains { path.hasPrefix($0) }
    }

    /// The directory holding libswiftCore.so (the toolchain's or the system's runtime), found once.
    private static let swiftRuntimeDirectory: String? = {
        var symbol: UnsafePointer<CChar>?
        var symbolAddress: UInt = 0
        var image: UnsafePointer<CChar>?
        guard let retain = dlsym(nil, "swift_retain") else { return nil }
        let address = UInt(bitPattern: retain)
        guard CStallMonitor_dladdr(address, &symbol, &symbolAddress, &image) != 0, let image else { return nil }
        let path = String(cString: image)
        guard let slash = path.lastIndex(of: "/") else { return nil }
        return String(path[...slash])
    }()
}
