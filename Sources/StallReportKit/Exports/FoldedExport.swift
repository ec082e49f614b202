import Foundation

/// Brendan Gregg's folded ("collapsed") stack format, as read by `flamegraph.pl`, inferno and
/// speedscope: one line per distinct stack, `root;caller;…;leaf COUNT`.
///
/// - COUNT is the stack's time in **microseconds** (sample weights are the effective sampling
///   interval), rounded to a whole number per line; lines with a count of 0 are left out.
/// - Frame names are cleaned so that they cannot change the structure: `;` (the frame separator)
///   becomes U+FF1B FULLWIDTH SEMICOLON `；`, which looks alike but is not a separator; line
///   breaks and tabs become spaces. A name never ends a line, so spaces in names
///   are safe (readers split the count off at the last space).
/// - Lines are sorted by stack, so output does not depend on reading order; names are written
///   in canonically composed form (NFC).
///
/// The lines are written from the stacks as frame ids (4 bytes a frame) without a string per stack: a
/// report whose every sample has a stack of its own needs little more than its output.
public enum FoldedExport {
    /// The character that replaces `;` inside a frame name.
    static let semicolonReplacement: Character = "\u{FF1B}"

    /// A frame name made safe for a folded line.
    package static func clean(_ name: String) -> String {
        var result = ""
        result.reserveCapacity(name.utf8.count)
        for character in name {
            switch character {
            case ";": result.append(semicolonReplacement)
            case "\n", "\r", "\r\n", "\t": result.append(" ")
            default: result.append(character)
            }
        }
        return result.isEmpty ? "?" : result
    }

    /// The folded text of the given profiles' samples.
    public static func render(_ profiles: [StallProfile], names style: FrameNameStyle = .simplified) -> String {
        String(decoding: render(SampleStacks(profiles: profiles), names: style), as: UTF8.self)
    }

    /// The folded text of collected stacks, as UTF-8.
    package static func render(_ stacks: SampleStacks, names style: FrameNameStyle = .simplified) -> Data {
        var output = Data()
        render(stacks, names: style) { output.append($0) }
        return output
    }

    /// The folded text of collected stacks, as UTF-8, handed to `write` in chunks of about 1 MiB
    /// (so that the whole text, often larger than the reports, is never held).
    package static func render(
        _ stacks: SampleStacks, names style: FrameNameStyle = .simplified,
        into write: (Data) throws -> Void
    ) rethrows {
        let names = stacks.frameTable.map { clean(style.display($0)) }
        let lines = FoldedLineOrder(names: names)
        var order = Array(0..<stacks.sampleCount)
        // Sorted as the lines' strings sort; equal lines (equal names of different frames too)
        // end up side by side and are merged.
        order.sort { lines.compare(stacks.stack(of: $0), stacks.stack(of: $1)) < 0 }
        var output = Data()
        output.reserveCapacity(Self.chunkBytes + 4096)
        var at = 0
        while at < order.count {
            var weight = 0.0
            var end = at
            while end < order.count,
                end == at || lines.compare(stacks.stack(of: order[at]), stacks.stack(of: order[end])) == 0
            {
                weight += stacks.weight(of: order[end])
                end += 1
            }
            let microseconds = Int(saturating: (weight * 1000).rounded())
            if microseconds > 0 {
                for (position, frame) in stacks.stack(of: order[at]).enumerated() {
                    if position > 0 { output.append(UInt8(ascii: ";")) }
                    output.append(contentsOf: lines.utf8[Int(frame)])
                }
                output.append(contentsOf: Array(" \(microseconds)\n".utf8))
                if output.count >= Self.chunkBytes {
                    try write(output)
                    output.removeAll(keepingCapacity: true)
                }
            }
            at = end
        }
        if !output.isEmpty { try write(output) }
    }

    /// The size of the chunks ``render(_:names:into:)`` hands on.
    static let chunkBytes = 1 << 20
}

/// Compares folded lines given as frame ids the way their strings compare (Swift orders strings
/// by their canonically composed Unicode scalars), without making the strings.
private struct FoldedLineOrder {
    /// Each name's UTF-8 bytes, as written.
    let utf8: [[UInt8]]
    /// Each name's scalars in canonically composed form, as strings are ordered.
    private let scalars: [[UInt32]]
    private static let separator = UInt32(UInt8(ascii: ";"))

    init(names: [String]) {
        // Written composed too: names that differ only in composition merge into one line, whose
        // bytes then do not depend on which came first.
        let composed = names.map(\.precomposedStringWithCanonicalMapping)
        utf8 = composed.map { Array($0.utf8) }
        scalars = composed.map { $0.unicodeScalars.map(\.value) }
    }

    /// Negative, zero or positive as line `a` sorts before, with or after line `b`.
    func compare(_ a: ArraySlice<Int32>, _ b: ArraySlice<Int32>) -> Int {
        var cursorA = Cursor(stack: a, scalars: scalars)
        var cursorB = Cursor(stack: b, scalars: scalars)
        while true {
            switch (cursorA.next(), cursorB.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case let (x?, y?) where x != y: return x < y ? -1 : 1
            default: continue
            }
        }
    }

    /// The scalars of a line: the names' scalars with `;` between them.
    private struct Cursor {
        let stack: ArraySlice<Int32>
        let scalars: [[UInt32]]
        var frame: Int
        var offset = 0

        init(stack: ArraySlice<Int32>, scalars: [[UInt32]]) {
            self.stack = stack
            self.scalars = scalars
            frame = stack.startIndex
        }

        mutating func next() -> UInt32? {
            while frame < stack.endIndex {
                let name = scalars[Int(stack[frame])]
                if offset < name.count {
                    offset += 1
                    return name[offset - 1]
                }
                frame += 1
                offset = 0
                if frame < stack.endIndex { return FoldedLineOrder.separator }
            }
            return nil
        }
    }
}
