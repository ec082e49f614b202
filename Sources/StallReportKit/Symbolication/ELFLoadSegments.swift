import Foundation

/// Reads the loadable segments (`PT_LOAD` program headers) of an ELF file, with its GNU build ID,
/// so an export can say which file offsets a run-time address range maps.
///
/// Uses ``ELFBuildID``'s bounded reader: a damaged or foreign file gives nil, never a crash.
package enum ELFLoadSegments {
    /// One `PT_LOAD` segment.
    package struct Segment: Sendable, Equatable {
        /// Offset of the segment in the file (`p_offset`).
        package var fileOffset: UInt64
        /// Link-time address of the segment (`p_vaddr`).
        package var virtualAddress: UInt64
        /// Bytes of the segment in memory (`p_memsz`).
        package var memorySize: UInt64
        /// Whether the segment is executable (`PF_X`).
        package var isExecutable: Bool
    }

    /// The file's build ID and load segments.
    package struct Layout: Sendable, Equatable {
        /// GNU build ID as lowercase hex, when the file has one.
        package var buildID: String?
        /// The `PT_LOAD` segments in program header order.
        package var segments: [Segment]
    }

    /// The layout of the ELF file at `path`; nil when it cannot be read or is not ELF.
    package static func read(path: String) -> Layout? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let size = try? handle.seekToEnd() else { return nil }
        let file = ELFBuildID.Reader(handle: handle, size: size)
        guard let header = ELFBuildID.header(file) else { return nil }
        let entrySize = header.phentsize
        let count = header.phnum
        guard header.phoff > 0, count > 0, count <= ELFBuildID.maxHeaders, entrySize >= (header.is64 ? 56 : 32),
            let table = file.bytes(at: header.phoff, count: entrySize * count)
        else { return nil }
        var segments: [Segment] = []
        for index in 0..<count {
            let base = index * entrySize
            guard header.integer(table, base, 4) == 1 else { continue }  // PT_LOAD
            // Elf64_Phdr: type, flags, offset, vaddr, paddr, filesz, memsz; Elf32_Phdr: type,
            // offset, vaddr, paddr, filesz, memsz, flags.
            let word = header.is64 ? 8 : 4
            let flags = header.integer(table, base + (header.is64 ? 4 : 24), 4)
            let offset = header.integer(table, base + (header.is64 ? 8 : 4), word)
            let vaddr = header.integer(table, base + (header.is64 ? 16 : 8), word)
            let memsz = header.integer(table, base + (header.is64 ? 40 : 20), word)
            segments.append(
                Segment(fileOffset: offset, virtualAddress: vaddr, memorySize: memsz, isExecutable: flags & 1 != 0))
        }
        return Layout(buildID: ELFBuildID.read(file), segments: segments)
    }
}
