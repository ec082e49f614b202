import Foundation

/// Reads the GNU build ID (`NT_GNU_BUILD_ID` note) of an ELF file.
///
/// Looks in the `PT_NOTE` segments named by the program headers, then (for split debug files,
/// whose program headers may not point at the notes) in the `SHT_NOTE` sections. Handles 32- and
/// 64-bit files of either byte order. Reads only the headers and the notes, with every count and
/// size checked against the file's length and small limits, so a damaged file is just "no ID".
package enum ELFBuildID {
    /// Largest note area read.
    static let maxNoteBytes = 1 << 16
    /// Most program or section headers looked at.
    static let maxHeaders = 4096

    /// The build ID of the file at `path` as lowercase hex, or nil when it is not an ELF file,
    /// cannot be read or has no build ID.
    package static func read(path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let size = try? handle.seekToEnd() else { return nil }
        let file = Reader(handle: handle, size: size)
        return read(file)
    }

    /// Random access to the file's bytes.
    struct Reader {
        let handle: FileHandle
        let size: UInt64

        func bytes(at offset: UInt64, count: Int) -> [UInt8]? {
            guard count >= 0, offset <= size, UInt64(count) <= size - offset else { return nil }
            guard (try? handle.seek(toOffset: offset)) != nil,
                let data = try? handle.read(upToCount: count), data.count == count
            else { return nil }
            return [UInt8](data)
        }
    }

    /// The file's header fields that locate program and section headers.
    struct Header {
        var is64: Bool
        var littleEndian: Bool
        var phoff: UInt64, phentsize: Int, phnum: Int
        var shoff: UInt64, shentsize: Int, shnum: Int

        func integer(_ bytes: [UInt8], _ offset: Int, _ width: Int) -> UInt64 {
            var value: UInt64 = 0
            for i in 0..<width {
                let byte = UInt64(bytes[offset + (littleEndian ? width - 1 - i : i)])
                value = value << 8 | byte
            }
            return value
        }
    }

    static func read(_ file: Reader) -> String? {
        guard let header = header(file) else { return nil }
        for (offset, size) in noteAreas(file, header, segments: true) {
            if let id = buildID(inNotes: file, header, offset: offset, size: size) { return id }
        }
        for (offset, size) in noteAreas(file, header, segments: false) {
            if let id = buildID(inNotes: file, header, offset: offset, size: size) { return id }
        }
        return nil
    }

    /// The ELF header's table locations; nil when the file is not ELF.
    static func header(_ file: Reader) -> Header? {
        guard let ident = file.bytes(at: 0, count: 64) ?? file.bytes(at: 0, count: 52),
            ident[0] == 0x7F, ident[1] == 0x45, ident[2] == 0x4C, ident[3] == 0x46,
            ident[4] == 1 || ident[4] == 2, ident[5] == 1 || ident[5] == 2
        else { return nil }
        let is64 = ident[4] == 2
        guard ident.count >= (is64 ? 64 : 52) else { return nil }
        var header = Header(
            is64: is64, littleEndian: ident[5] == 1, phoff: 0, phentsize: 0, phnum: 0, shoff: 0, shentsize: 0, shnum: 0)
        // e_phoff and e_shoff are addresses (8 or 4 bytes); e_phentsize, e_phnum, e_shentsize and
        // e_shnum are consecutive 2-byte fields, at 54 (ELF64) or 42 (ELF32).
        let (phoff, shoff, width, sizes) = is64 ? (32, 40, 8, 54) : (28, 32, 4, 42)
        header.phoff = header.integer(ident, phoff, width)
        header.shoff = header.integer(ident, shoff, width)
        header.phentsize = Int(header.integer(ident, sizes, 2))
        header.phnum = Int(header.integer(ident, sizes + 2, 2))
        header.shentsize = Int(header.integer(ident, sizes + 4, 2))
        header.shnum = Int(header.integer(ident, sizes + 6, 2))
        return header
    }

    /// File offset and size of each `PT_NOTE` segment (`segments`) or `SHT_NOTE` section.
    static func noteAreas(_ file: Reader, _ header: Header, segments: Bool) -> [(UInt64, Int)] {
        let (tableOffset, entrySize, count) =
            segments ? (header.phoff, header.phentsize, header.phnum) : (header.shoff, header.shentsize, header.shnum)
        let minimumEntry = segments ? (header.is64 ? 56 : 32) : (header.is64 ? 64 : 40)
        guard tableOffset > 0, count > 0, count <= maxHeaders, entrySize >= minimumEntry,
            let table = file.bytes(at: tableOffset, count: entrySize * count)
        else { return [] }
        var areas: [(UInt64, Int)] = []
        for index in 0..<count {
            let base = index * entrySize
            let type: UInt64
            let offset: UInt64
            let size: UInt64
            if segments {
                type = header.integer(table, base, 4)
                offset = header.integer(table, base + (header.is64 ? 8 : 4), header.is64 ? 8 : 4)
                size = header.integer(table, base + (header.is64 ? 32 : 16), header.is64 ? 8 : 4)
                guard type == 4 else { continue }  // PT_NOTE
            } else {
                type = header.integer(table, base + 4, 4)
                offset = header.integer(table, base + (header.is64 ? 24 : 16), header.is64 ? 8 : 4)
                size = header.integer(table, base + (header.is64 ? 32 : 20), header.is64 ? 8 : 4)
                guard type == 7 else { continue }  // SHT_NOTE
            }
            guard size > 0, size <= UInt64(maxNoteBytes) else { continue }
            areas.append((offset, Int(size)))
        }
        return areas
    }

    /// Walks the notes in one area and returns the descriptor of the `GNU` note of type 3.
    static func buildID(inNotes file: Reader, _ header: Header, offset: UInt64, size: Int) -> String? {
        guard let notes = file.bytes(at: offset, count: size) else { return nil }
        var position = 0
        while position + 12 <= notes.count {
            let nameSize = Int(header.integer(notes, position, 4))
            let descSize = Int(header.integer(notes, position + 4, 4))
            let type = header.integer(notes, position + 8, 4)
            let nameStart = position + 12
            let descStart = nameStart + (nameSize + 3) / 4 * 4
            let next = descStart + (descSize + 3) / 4 * 4
            guard nameSize <= notes.count, descSize <= notes.count, descStart + descSize <= notes.count, next > position
            else { return nil }
            let name = notes[nameStart..<nameStart + nameSize]
            if type == 3, nameSize == 4, Array(name) == [0x47, 0x4E, 0x55, 0], descSize > 0 {
                return notes[descStart..<descStart + descSize].map { String(format: "%02x", $0) }.joined()
            }
            position = next
        }
        return nil
    }
}
