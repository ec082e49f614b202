/// Where one image's pprof `Mapping` lies in memory and which file offset its start maps.
///
/// A symbolizer (pprof's, Pyroscope's, Parca's) turns a location's run-time address `x` into a
/// file offset `x - memory_start + file_offset`, then into a link-time address through the ELF
/// program headers of the file with the mapping's build ID (pprof: `elfexec.GetBase`). So the
/// mapping must describe a range in which run-time address and file offset differ by a constant,
/// as one line of `/proc/<pid>/maps` does:
///
/// - **The ELF file is here** (same path, same build ID as the report says): the mapping is the
///   executable `PT_LOAD` segment that holds all of the image's locations (sampled addresses are
///   code), exactly as the kernel maps it: `start = bias + p_vaddr`, `file_offset = p_offset`,
///   both rounded down by the same amount to a page, `limit = bias + p_vaddr + p_memsz` rounded
///   up. The rounding changes nothing for symbolization: `x - start + offset` stays
///   `x - bias - p_vaddr + p_offset`. When no single executable segment holds every location
///   (several executable segments, or an address outside them), the mapping covers the whole
///   image: from the lowest `PT_LOAD` (its own offset) to the end of the highest.
/// - **It is not** (a report from another machine, a rebuilt binary): the mapping starts at the
///   image's load address (the lowest `PT_LOAD` segment, which linkers place at file offset 0:
///   it holds the ELF header), `file_offset = 0`, and ends after the highest location address
///   seen, rounded up to a page: the report lists no image size, so this is the safe limit that
///   holds every location without claiming addresses of the next image. The offsets are then
///   exact for images whose segments keep `p_vaddr - p_offset` constant (GNU ld's layout, most
///   distribution libraries) and off by the gap for others; a backend that has the file by
///   build ID does better with the first rule, which is why it is used whenever it can be.
struct PprofMappingRange: Equatable {
    /// First address of the mapping.
    var start: UInt64
    /// First address past the mapping.
    var limit: UInt64
    /// File offset of ``start``.
    var fileOffset: UInt64

    /// Page size used to round ranges (the value most Linux systems map with; see above: the
    /// rounding does not affect address-to-offset arithmetic).
    static let pageSize: UInt64 = 4096

    /// Whether `address` lies in the mapping.
    func contains(_ address: UInt64) -> Bool { start <= address && address < limit }

    /// The range of an image loaded at `loadAddress` with load `bias`, whose locations have the
    /// given `addresses`, with the file's `layout` when it is here and matches.
    static func derive(
        loadAddress: UInt64, bias: UInt64, addresses: [UInt64], layout: ELFLoadSegments.Layout?
    ) -> PprofMappingRange {
        if let layout, let range = fromSegments(layout.segments, bias: bias, addresses: addresses) { return range }
        let start = pageDown(loadAddress)
        let highest = addresses.max() ?? loadAddress
        let end = highest == UInt64.max ? UInt64.max : pageUp(highest + 1)
        return PprofMappingRange(start: start, limit: max(end, start == UInt64.max ? start : start + 1), fileOffset: 0)
    }

    /// The executable segment holding every address, else the whole image; nil on overflow or no segment.
    static func fromSegments(
        _ segments: [ELFLoadSegments.Segment], bias: UInt64, addresses: [UInt64]
    ) -> PprofMappingRange? {
        func range(_ segment: ELFLoadSegments.Segment) -> PprofMappingRange? {
            let (runtime, overflow) = bias.addingReportingOverflow(segment.virtualAddress)
            let (end, overflowEnd) = runtime.addingReportingOverflow(segment.memorySize)
            guard !overflow, !overflowEnd else { return nil }
            let delta = runtime - pageDown(runtime)
            guard segment.fileOffset >= delta else { return nil }
            return PprofMappingRange(
                start: runtime - delta, limit: end > UInt64.max - pageSize ? end : pageUp(end),
                fileOffset: segment.fileOffset - delta)
        }
        let executable = segments.filter(\.isExecutable).compactMap(range)
        if let holding = executable.first(where: { candidate in addresses.allSatisfy(candidate.contains) }) {
            return holding
        }
        guard let lowest = segments.min(by: { $0.virtualAddress < $1.virtualAddress }), let first = range(lowest) else {
            return nil
        }
        let ends = segments.compactMap(range).map(\.limit)
        return PprofMappingRange(start: first.start, limit: ends.max() ?? first.limit, fileOffset: first.fileOffset)
    }

    static func pageDown(_ value: UInt64) -> UInt64 { value & ~(pageSize - 1) }
    static func pageUp(_ value: UInt64) -> UInt64 {
        value > UInt64.max - (pageSize - 1) ? UInt64.max : pageDown(value + pageSize - 1)
    }
}
