/// The name a frame's function has in a fingerprint: the same for a debug and a release build of
/// the same code.
///
/// An optimizing build clones a function for the arguments it is called with and the demangler
/// names the clone after it (`function signature specialization <Arg[1] = Dead> of X`,
/// `generic specialization <Swift.Int> of X`, `merged X`): the clone is X. A partial function of
/// an async function X (`(2) await resume partial function for X`, numbered as the build split
/// it) is X. The compiler's entry into an `@main` type (`$main`, `async_Main`) does not count. A
/// `partial apply forwarder for X` is X too: a debug build calls X from it, a release build
/// inlines X into it (``collapsed(_:)`` then keeps one X of two in a row). Other compiler-made
/// glue (a reabstraction thunk) is not a function of the app: it has no name here (nil).
public enum FingerprintName {
    /// The function `symbol` stands for in a fingerprint, or nil for compiler-made glue.
    public static func of(_ symbol: String) -> String? {
        var name = Substring(AsyncCallerNames.function(of: symbol))
        if name.hasPrefix(forwarder) { name = name.dropFirst(forwarder.count) }
        if AsyncCallerNames.isThunk(String(name)) || isEntryGlue(name) { return nil }
        while let rest = droppingCloneKind(name) { name = rest }
        return String(name)
    }

    /// `names` with each run of the same name kept once (a forwarder and the function it
    /// forwards to, in a debug build).
    public static func collapsed(_ names: [String]) -> [String] {
        var result: [String] = []
        for name in names where result.last != name { result.append(name) }
        return result
    }

    private static let forwarder = "partial apply forwarder for "

    /// The compiler's entry into an `@main` type (`static App.$main()`, the async main's
    /// `async_Main…`): a debug build keeps them in a chain, a release build folds them away.
    private static func isEntryGlue(_ name: Substring) -> Bool {
        name.hasPrefix("async_Main") || name.contains(".$main() ") || name.hasSuffix(".$main()")
    }

    /// Prefixes of clones whose specialization is in `<…>` before ` of `.
    private static let bracketedKinds = [
        "function signature specialization <", "generic specialization <", "generic partial specialization <",
        "generic not-reabstracted specialization <",
    ]

    /// Prefixes of clones named by a plain word.
    private static let plainKinds = ["merged ", "specialized "]

    /// `name` without one leading clone kind; nil when it has none (or it does not parse).
    private static func droppingCloneKind(_ name: Substring) -> Substring? {
        for kind in plainKinds where name.hasPrefix(kind) { return name.dropFirst(kind.count) }
        for kind in bracketedKinds where name.hasPrefix(kind) {
            guard let close = closingBracket(in: name, after: name.index(name.startIndex, offsetBy: kind.count)) else {
                return nil
            }
            let rest = name[name.index(after: close)...]
            return rest.hasPrefix(" of ") ? rest.dropFirst(4) : nil
        }
        return nil
    }

    /// The `>` that closes the `<` just before `start` (an arrow's `->` is not one).
    private static func closingBracket(in name: Substring, after start: Substring.Index) -> Substring.Index? {
        var depth = 1
        var previous: Character = "<"
        var index = start
        while index < name.endIndex {
            let character = name[index]
            if character == "<" { depth += 1 }
            if character == ">" && previous != "-" {
                depth -= 1
                if depth == 0 { return index }
            }
            previous = character
            index = name.index(after: index)
        }
        return nil
    }
}
