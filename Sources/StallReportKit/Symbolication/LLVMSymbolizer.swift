import Foundation

/// Names addresses of one ELF file with `llvm-symbolizer` (symbol tables and DWARF), in one run.
///
/// Addresses are link-time addresses (run-time address minus the image's load bias). Runs
/// `llvm-symbolizer --obj=FILE --output-style=JSON --functions=linkage --no-inlines`: linkage
/// names, so Swift names can be demangled by `swift-demangle` afterwards (LLVM's own demangler
/// only handles C++ and Rust names and leaves Swift's `$s…` names alone); no inlined frames, so a
/// frame is named after the function that contains its address, as the in-process symbolicator
/// does. File and line come from the line table, and only together (line 0 means no location).
package struct LLVMSymbolizer: Sendable {
    /// What is known about one address.
    package struct Symbol: Sendable, Equatable {
        /// Linkage name (C++ names demangled, Swift names still mangled).
        package var name: String?
        /// Bytes from the start of the function, when its start is known.
        package var offset: Int?
        /// Source file, when known.
        package var file: String?
        /// Source line, when known.
        package var line: Int?
    }

    /// Path of `llvm-symbolizer`.
    package var executable: String

    /// Creates a symbolizer that runs `executable`.
    package init(executable: String) {
        self.executable = executable
    }

    /// Names `addresses` (link-time) of the file at `path`; addresses it cannot name are absent.
    package func symbolize(path: String, addresses: [UInt]) throws(ToolRunner.Failure) -> [UInt: Symbol] {
        guard !addresses.isEmpty else { return [:] }
        let input = addresses.map { ReportCoding.formatAddress($0) }.joined(separator: "\n") + "\n"
        let output = try ToolRunner.run(
            executable, ["--obj=\(path)", "--output-style=JSON", "--functions=linkage", "--no-inlines"], input: input)
        return Self.parse(output)
    }

    private struct Line: Decodable {
        var Address: String?
        var Symbol: [Entry]?
    }

    private struct Entry: Decodable {
        var FunctionName: String?
        var FileName: String?
        var Line: Int?
        var StartAddress: String?
    }

    /// Parses the JSON lines `llvm-symbolizer --output-style=JSON` prints, one object per address.
    package static func parse(_ output: String) -> [UInt: Symbol] {
        var result: [UInt: Symbol] = [:]
        let decoder = JSONDecoder()
        for text in output.split(separator: "\n") {
            guard let line = try? decoder.decode(Line.self, from: Data(text.utf8)),
                let addressText = line.Address, let address = ReportCoding.parseAddress(addressText),
                let entry = line.Symbol?.first
            else { continue }
            let name = entry.FunctionName.flatMap { $0.isEmpty || $0 == "??" ? nil : $0 }
            // A file without a line (line 0) is no real location: often a neighbouring compile
            // unit's name in a library without line tables, or `<compiler-generated>`.
            let lineNumber = entry.Line.flatMap { $0 > 0 ? $0 : nil }
            var file = entry.FileName.flatMap { $0.isEmpty || $0 == "??" ? nil : $0 }
            if let known = file, known.hasSuffix("<compiler-generated>") || lineNumber == nil { file = nil }
            var offset: Int?
            if name != nil, let startText = entry.StartAddress, let start = ReportCoding.parseAddress(startText),
                start <= address
            {
                offset = Int(address - start)
            }
            guard name != nil || file != nil else { continue }
            result[address] = Symbol(name: name, offset: offset, file: file, line: file == nil ? nil : lineNumber)
        }
        return result
    }
}
