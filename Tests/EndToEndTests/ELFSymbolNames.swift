import Foundation
import StallReportKit

/// The defined symbols of an ELF file as `nm` lists them, by name (raw, not demangled).
///
/// Used to judge offline names: `strip` keeps the dynamic symbol table, so a stripped binary
/// still names its exported functions, and one address can carry several names (aliases, e.g.
/// a sanitizer's `___interceptor_clock_gettime` and `__interceptor_clock_gettime`), of which
/// libdw and llvm-symbolizer may pick different ones.
struct ELFSymbolNames {
    private let addressByName: [String: UInt64]

    /// Reads `path`'s symbol table (`dynamic`: its dynamic symbol table) with `nm --defined-only`.
    init(path: String, dynamic: Bool = false) throws {
        let listing = try ToolRunner.run("/usr/bin/nm", (dynamic ? ["-D"] : []) + ["--defined-only", path], input: "")
        var addressByName: [String: UInt64] = [:]
        for line in listing.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count == 3, let address = UInt64(fields[0], radix: 16) else { continue }
            addressByName[String(fields[2].split(separator: "@").first ?? fields[2])] = address
        }
        self.addressByName = addressByName
    }

    /// Whether `name` is one of the file's symbols.
    func contains(_ name: String) -> Bool { addressByName[name] != nil }

    /// Whether `first` and `second` are the same name or two names of one address.
    func sameFunction(_ first: String?, _ second: String?) -> Bool {
        guard let first, let second else { return first == second }
        if first == second { return true }
        guard let a = addressByName[first], let b = addressByName[second] else { return false }
        return a == b
    }
}
