/// Simplified Swift names, as `swift demangle --simplified` prints them, made from the full
/// demangled names that reports hold (`static stall_demo.Scenarios.spinOnCPU(milliseconds: Swift.Int) -> ()`
/// becomes `static Scenarios.spinOnCPU(milliseconds:)`).
///
/// Module prefixes, private discriminators, argument, return and variable types, `where` clauses,
/// conformances and unmangled suffixes are dropped; argument labels, generic parameters, closures
/// and the `in` chain around them stay. The input is parsed with balanced brackets. C and C++ names,
/// addresses and anything that does not parse as a demangled Swift name come back unchanged.
public enum SimplifiedSwiftName {
    /// Longest name simplified; longer names come back unchanged.
    static let maxLength = 4096

    /// The simplified form of the full demangled name `name`, or `name` itself when it is not a
    /// demangled Swift name or cannot be simplified.
    public static func simplify(_ name: String) -> String {
        guard name.utf8.count <= maxLength, isCandidate(name), nestingDepth(name) <= maxDepth else { return name }
        return Simplifier.symbol(Array(name)) ?? name
    }

    /// Deepest bracket nesting simplified: the parser recurses once per level.
    static let maxDepth = 32

    /// Deepest nesting of `(`, `[`, `{` and `<` in `name` (an upper bound: arrows count too).
    static func nestingDepth(_ name: String) -> Int {
        var depth = 0
        var deepest = 0
        for byte in name.utf8 {
            switch byte {
            case UInt8(ascii: "("), UInt8(ascii: "["), UInt8(ascii: "{"), UInt8(ascii: "<"):
                depth += 1
                deepest = max(deepest, depth)
            case UInt8(ascii: ")"), UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: ">"):
                depth = max(0, depth - 1)
            default: break
            }
        }
        return deepest
    }

    /// Whether `name` may be a demangled Swift name (C++ names, addresses and plain C names are not).
    static func isCandidate(_ name: String) -> Bool {
        guard name.contains(".") || name.contains(" ") else { return false }
        return !name.contains("::") && !name.contains("+0x") && !name.hasPrefix("0x") && !name.contains("\n")
    }
}

/// Text of one demangled name as characters, and the parsing steps over it. Every step returns nil
/// when the text is not what it expects; the caller then keeps the full name.
private enum Simplifier {
    typealias Text = [Character]

    // MARK: Symbols

    /// A whole symbol: prefixes such as `partial apply forwarder for`, then a chain of entities.
    static func symbol(_ text: Text) -> String? {
        var text = text
        let suffix = Array(" with unmangled suffix \"")
        if text.last == "\"", let at = lastTopLevel(text, suffix) { text = Array(text[..<at]) }
        if let rest = dropAsyncPartial(text) { return symbol(rest) }
        for (full, simple) in renamedPrefixes where text.starts(with: full) {
            guard let rest = symbol(Array(text[full.count...])) else { return nil }
            return simple + rest
        }
        if text == Array("partial apply forwarder") { return "partial apply" }
        for prefix in specializations where text.starts(with: prefix) {
            guard let close = matching(text, prefix.count - 1),
                text[(close + 1)...].starts(with: Array(" of "))
            else { return nil }
            guard let rest = symbol(Array(text[(close + 5)...])) else { return nil }
            return "specialized " + rest
        }
        if let thunk = reabstractionThunk(text) { return thunk }
        let witness = Array("protocol witness for ")
        if text.starts(with: witness) {
            let body = Array(text[witness.count...])
            guard let at = firstTopLevel(body, Array(" in conformance ")),
                let requirement = chain(Array(body[..<at])),
                let conformance = conformance(Array(body[(at + 16)...]))
            else { return nil }
            return "protocol witness for " + requirement + " in conformance " + conformance
        }
        return chain(text)
    }

    /// Prefixes printed differently by the simplified demangler, followed by a symbol.
    static let renamedPrefixes: [(Text, String)] = [
        (Array("partial apply forwarder for "), "partial apply for "),
        (Array("merged "), "merged "),
    ]

    /// Specialization prefixes (ending in the `<` of their parameters): all become `specialized`.
    static let specializations: [Text] = [
        "generic specialization <", "function signature specialization <", "generic partial specialization <",
        "generic not re-abstracted specialization <", "inlined generic function <",
    ].map { Array($0) }

    /// `(2) await resume partial function for X` and `… suspend resume …`: the simplified demangler prints X.
    static func dropAsyncPartial(_ text: Text) -> Text? {
        guard text.first == "(", let close = matching(text, 0), close > 1,
            text[1..<close].allSatisfy(\.isNumber)
        else { return nil }
        for phrase in [" await resume partial function for ", " suspend resume partial function for "] {
            let phrase = Array(phrase)
            if text[(close + 1)...].starts(with: phrase) { return Array(text[(close + 1 + phrase.count)...]) }
        }
        return nil
    }

    /// `reabstraction thunk helper from A to B` becomes `thunk for A` with A simplified.
    static func reabstractionThunk(_ text: Text) -> String? {
        var rest: Text
        if text.starts(with: Array("reabstraction thunk helper ")) {
            rest = Array(text[27...])
        } else if text.starts(with: Array("reabstraction thunk ")) {
            rest = Array(text[20...])
        } else {
            return nil
        }
        while rest.first == "<" {
            guard let close = matching(rest, 0), close + 1 < rest.count else { return nil }
            rest = Array(rest[(close + 1)...])
        }
        if rest.first == " " { rest.removeFirst() }
        guard rest.starts(with: Array("from ")) else { return nil }
        rest = Array(rest[5...])
        let from = firstTopLevel(rest, Array(" to ")).map { Array(rest[..<$0]) } ?? rest
        return type(from, keepFunctionTypes: true).map { "thunk for " + $0 }
    }

    /// `T : P in Module` (a conformance) becomes T; `P.A : Q in T : P in Module` (an associated
    /// conformance) becomes `P.A : Q in T`.
    static func conformance(_ text: Text) -> String? {
        var text = text
        if let at = lastTopLevel(text, Array(" in ")), isIdentifier(text[(at + 4)...]) { text = Array(text[..<at]) }
        guard let colon = lastTopLevel(text, Array(" : ")) else {
            if let colon = firstTopLevel(text, Array(": ")), let a = type(Array(text[..<colon])),
                let b = type(Array(text[(colon + 2)...]))
            {
                // A base conformance `P: Q`.
                return a + ": " + b
            }
            return type(text)
        }
        let conforming = Array(text[..<colon])
        if let at = lastTopLevel(conforming, Array(" in ")), let inner = firstTopLevel(conforming, Array(" : ")),
            inner < at,
            let a = type(Array(conforming[..<inner])), let b = type(Array(conforming[(inner + 3)..<at])),
            let c = type(Array(conforming[(at + 4)...]))
        {
            return a + " : " + b + " in " + c
        }
        if let at = firstTopLevel(conforming, Array(" in ")), let a = type(Array(conforming[..<at])),
            let b = type(Array(conforming[(at + 4)...]))
        {
            // A base protocol's conformance `P in T`.
            return a + " in " + b
        }
        return type(conforming)
    }

    // MARK: Chains of entities

    /// `closure #1 … in implicit closure #2 … in Module.Type.method(…) -> …`: each part simplified.
    static func chain(_ text: Text) -> String? {
        if let whole = described(text) { return whole }
        let parts = splitTopLevel(text, Array(" in "))
        var out: [String] = []
        for (index, part) in parts.enumerated() {
            if index == parts.count - 1 {
                guard let last = described(part) else { return nil }
                out.append(last)
            } else {
                guard let local = localPart(part) ?? described(part) else { return nil }
                out.append(local)
            }
        }
        return out.joined(separator: " in ")
    }

    /// A local entity before ` in `: `closure #1 (…) -> …` becomes `closure #1`; a local function
    /// `name #1 (a: T) -> U` keeps its labels, `name #1 (a:)`.
    static func localPart(_ text: Text) -> String? {
        guard let hash = firstTopLevel(text, Array(" #")) else { return nil }
        var end = hash + 2
        while end < text.count, text[end].isNumber { end += 1 }
        guard end > hash + 2 else { return nil }
        let head = String(text[..<end])
        let name = text[..<hash]
        let rest = Array(text[end...])
        if String(name).hasSuffix("closure") { return head }
        guard !name.isEmpty, name.allSatisfy({ isIdentifierCharacter($0) }) else { return nil }
        guard rest.first == " " else { return head }
        var type = Array(rest.dropFirst())
        var signature = ""
        while type.first == "<" || type.first == "@" {
            if type.first == "@" {
                // Attributes such as `@Sendable ` stay, as the simplified demangler prints them.
                guard let space = type.firstIndex(of: " ") else { return nil }
                signature += String(type[...space])
                type = Array(type[(space + 1)...])
                continue
            }
            guard let close = matching(type, 0), let arguments = genericArguments(Array(type[1..<close])) else {
                return nil
            }
            signature += arguments
            type = Array(type[(close + 1)...])
        }
        guard type.first == "(", let close = matching(type, 0), let labels = labels(Array(type[1..<close])) else {
            return nil
        }
        return head + " " + signature + labels
    }

    /// An entity, possibly after descriptive words (`variable initialization expression of X`,
    /// `type metadata accessor for T`, `getEnumTag value witness for T`).
    static func described(_ text: Text) -> String? {
        if let entity = entity(text) { return entity }
        var words: [String] = []
        var index = 0
        while index < text.count {
            var end = index
            while end < text.count, text[end].isLetter || text[end].isNumber || text[end] == "-" || text[end] == "_" {
                end += 1
            }
            guard end > index, end < text.count, text[end] == " " else { break }
            words.append(String(text[index..<end]))
            index = end + 1
            if ["for", "of", "to"].contains(words.last!) { break }
        }
        guard !words.isEmpty, index < text.count else { return nil }
        let subject = Array(text[index...])
        if words.count >= 3, words[words.count - 3] == "value", words[words.count - 2] == "witness", words.last == "for"
        {
            words.removeSubrange((words.count - 3)..<(words.count - 1))
        }
        let prefix = words.joined(separator: " ") + " "
        if words.last == "type", let and = firstTopLevel(subject, Array(" and conformance ")) {
            guard let first = type(Array(subject[..<and])), let second = conformance(Array(subject[(and + 17)...]))
            else { return nil }
            return prefix + first + " and conformance " + second
        }
        if words == ["module", "descriptor"], isIdentifier(subject[...]) { return prefix }
        if let simple = symbol(subject) ?? type(subject) { return prefix + simple }
        if let simple = keyPathEntity(subject) ?? conformance(subject) { return prefix + simple }
        return nil
    }

    /// `static M.T.x : Swift.Double : M.T.Type` (a key path accessor's subject): `static T.x : T.Type`.
    static func keyPathEntity(_ text: Text) -> String? {
        let parts = splitTopLevel(text, Array(" : "))
        guard parts.count == 3 || parts.count == 2, let name = entity(parts[0]), let base = type(parts[parts.count - 1])
        else { return nil }
        return name + " : " + base
    }

    // MARK: Entities

    /// `[static ][(extension in M):]M.T.name[<sig>][(params)][ async][ throws][ -> R]` or
    /// `… M.T.name.getter : Type`, simplified.
    static func entity(_ text: Text) -> String? {
        var text = text
        var prefix = ""
        for keyword in ["@objc ", "@nonobjc ", "static ", "dynamic "] where text.starts(with: Array(keyword)) {
            prefix += keyword
            text.removeFirst(keyword.count)
        }
        text = dropExtensionContext(text)
        guard let path = parsePath(text, from: 0), path.components.count >= 2 else { return nil }
        var out = prefix + path.components.dropFirst().joined(separator: ".")
        var index = path.end
        if index < text.count, text[index] == "(" {
            guard let close = matching(text, index), let labels = labels(Array(text[(index + 1)..<close])) else {
                return nil
            }
            // A full name always has a return type; `M.T.f(a:)` without one is simplified already.
            if close + 1 == text.count, labels == "(" + String(text[(index + 1)..<close]) + ")" { return nil }
            out += labels
            index = close + 1
            guard isFunctionTail(Array(text[index...])) else { return nil }
            return out
        }
        if index == text.count { return prefix + pathType(path) }
        guard text[index...].starts(with: Array(" : ")) else { return nil }
        let variableType = Array(text[(index + 3)...])
        guard firstTopLevel(variableType, Array(" : ")) == nil, type(variableType) != nil else { return nil }
        return out
    }

    /// Whether `text` is what may follow a function's parameters: effects and a return type.
    static func isFunctionTail(_ text: Text) -> Bool {
        var rest = text[...]
        while !rest.isEmpty {
            if rest.starts(with: Array(" async")) {
                rest = rest.dropFirst(6)
            } else if rest.starts(with: Array(" throws(")) {
                guard let close = matching(Array(rest), 7) else { return false }
                rest = rest.dropFirst(close + 1)
            } else if rest.starts(with: Array(" throws")) {
                rest = rest.dropFirst(7)
            } else if rest.starts(with: Array(" rethrows")) {
                rest = rest.dropFirst(9)
            } else if rest.starts(with: Array(" -> ")) {
                return type(Array(rest.dropFirst(4))) != nil
            } else {
                return false
            }
        }
        return true
    }

    /// `(a: T, _: U, V)` (contents without the parentheses) becomes `(a:_:_:)`.
    static func labels(_ parameters: Text) -> String? {
        if parameters.allSatisfy({ $0 == " " }) { return "()" }
        if parameters.last == ":", !parameters.contains(" "),
            parameters.split(separator: ":").allSatisfy({ isIdentifier($0) })
        {
            // Labels already: `(milliseconds:)`, `(_:gap:)` (a name simplified before).
            return "(" + String(parameters) + ")"
        }
        var out = "("
        for parameter in splitTopLevel(parameters, Array(", ")) {
            if let colon = firstTopLevel(parameter, Array(": ")), isIdentifier(parameter[..<colon]) {
                guard type(Array(parameter[(colon + 2)...])) != nil else { return nil }
                out += String(parameter[..<colon]) + ":"
            } else {
                guard type(parameter) != nil else { return nil }
                out += "_:"
            }
        }
        return out + ")"
    }

    /// `(extension in Module):` at the start of an entity or type is dropped.
    static func dropExtensionContext(_ text: Text) -> Text {
        let opening = Array("(extension in ")
        guard text.starts(with: opening), let close = matching(text, 0), close + 1 < text.count, text[close + 1] == ":"
        else { return text }
        return Array(text[(close + 2)...])
    }

    // MARK: Paths

    /// A dotted path `M.T<A>.(name in _H).x` parsed from `from`: its simplified components and
    /// the index after it.
    struct Path {
        var components: [String]
        var end: Int
        var firstIsGenericParameter: Bool
    }

    static func parsePath(_ text: Text, from start: Int) -> Path? {
        var components: [String] = []
        var index = start
        var firstIsGenericParameter = false
        while true {
            var component = ""
            if index < text.count, text[index] == "(" {
                // A private name `(name in _HASH)` or a local type `(Name #1 in …)`.
                guard let close = matching(text, index) else { return nil }
                let inner = Array(text[(index + 1)..<close])
                guard let at = firstTopLevel(inner, Array(" in ")) ?? (inner.starts(with: Array("in ")) ? -1 : nil)
                else { return nil }
                component = at < 0 ? "" : String(inner[..<at])
                guard component.isEmpty || isIdentifier(Array(component)[...]) || component.contains(" #") else {
                    return nil
                }
                index = close + 1
            } else if let length = operatorLength(text, index) {
                component = String(text[index..<(index + length)])
                index += length
            } else {
                var end = index
                if end < text.count, text[end] == "`", let close = text[(end + 1)...].firstIndex(of: "`") {
                    end = close + 1
                } else {
                    while end < text.count, isIdentifierCharacter(text[end]) { end += 1 }
                }
                guard end > index else { return nil }
                component = String(text[index..<end])
                if components.isEmpty { firstIsGenericParameter = isGenericParameter(component) }
                index = end
            }
            while index < text.count, text[index] == "<" {
                guard let close = matching(text, index),
                    let arguments = genericArguments(Array(text[(index + 1)..<close]))
                else { return nil }
                component += arguments
                index = close + 1
            }
            if !component.isEmpty { components.append(component) }
            guard index < text.count, text[index] == ".", !text[index...].starts(with: Array("...")) else { break }
            index += 1
        }
        guard !components.isEmpty else { return nil }
        return Path(components: components, end: index, firstIsGenericParameter: firstIsGenericParameter)
    }

    /// A generic signature or argument list (without the angle brackets): `where` clauses dropped,
    /// each argument simplified as a type.
    static func genericArguments(_ text: Text) -> String? {
        var text = text
        if text.starts(with: Array(" where ")) || text.starts(with: Array("where ")) {
            text = []
        } else if let at = firstTopLevel(text, Array(" where ")) {
            text = Array(text[..<at])
        }
        if text.isEmpty { return "<>" }
        var out: [String] = []
        for argument in splitTopLevel(text, Array(", ")) {
            guard let simple = argument == Array("serialized") ? nil : type(argument) else { return nil }
            out.append(simple)
        }
        return "<" + out.joined(separator: ", ") + ">"
    }

    // MARK: Types

    /// A type with module prefixes and private discriminators dropped and the sugar the
    /// simplified demangler adds: `[T]`, `T?`, `[K : V]`. Function types print as their labels,
    /// `(_:_:)`, unless `keepFunctionTypes` (the SIL function types of thunks).
    static func type(_ text: Text, keepFunctionTypes: Bool = false) -> String? {
        var keepFunctionTypes = keepFunctionTypes
        var out = ""
        var index = 0
        // Attributes and ownership words before the type.
        while index < text.count {
            if text[index] == "@" || text[index...].starts(with: Array("nonisolated(")) {
                var end = index + 1
                while end < text.count, isIdentifierCharacter(text[end]) { end += 1 }
                if end < text.count, text[end] == "(" {
                    guard let close = matching(text, end) else { return nil }
                    end = close + 1
                }
                guard end < text.count, text[end] == " " else { return nil }
                // SIL function types (thunks, outlined copies) are printed in full.
                if text[index...].starts(with: Array("@callee_")) { keepFunctionTypes = true }
                out += String(text[index...end])
                index = end + 1
                continue
            }
            if let word = typeKeywords.first(where: { text[index...].starts(with: $0) }) {
                out += String(word)
                index += word.count
                continue
            }
            break
        }
        guard index < text.count else { return nil }
        if text[index] == "<" {
            // The generic signature of a generic function type.
            guard let close = matching(text, index), let signature = genericArguments(Array(text[(index + 1)..<close]))
            else { return nil }
            out += signature
            index = close + 1
            if index < text.count, text[index] == " " {
                // A generic conformance: `<A where …> M.T<A>`.
                out += " "
                index += 1
            }
            guard index < text.count else { return nil }
        }
        var isFunction = false
        if text[index...].starts(with: Array("(extension in ")) {
            guard let close = matching(text, index), close + 1 < text.count, text[close + 1] == ":" else { return nil }
            index = close + 2
        }
        if text[index] == "(" || text[index] == "[" {
            guard let close = matching(text, index) else { return nil }
            let inner = Array(text[(index + 1)..<close])
            var rest = close + 1
            while let effect = functionEffects.first(where: { text[rest...].starts(with: $0) }) {
                rest += effect.count
                if effect.last == "(" {
                    guard let end = matching(text, rest - 1) else { return nil }
                    rest = end + 1
                }
            }
            isFunction = text[index] == "(" && text[rest...].starts(with: Array(" -> "))
            if isFunction && !keepFunctionTypes {
                guard let labels = labels(inner), type(Array(text[(rest + 4)...])) != nil else { return nil }
                return out + labels
            }
            if text[index] == "(", firstTopLevel(inner, Array(" in ")) != nil {
                guard let path = parsePath(text, from: index) else { return nil }
                out += pathType(path)
                index = path.end
            } else {
                guard let list = typeList(inner, keepFunctionTypes: keepFunctionTypes) else { return nil }
                out += String(text[index]) + list + String(text[close]) + String(text[(close + 1)..<rest])
                index = rest
            }
        } else {
            guard let path = parsePath(text, from: index) else { return nil }
            out += pathType(path)
            index = path.end
        }
        // Suffixes: `.Type`, `...`, `?`, `!`, then ` -> R` or ` & Q`.
        while index < text.count {
            if text[index...].starts(with: Array("...")) {
                out += "..."
                index += 3
            } else if text[index] == "?" || text[index] == "!" {
                out.append(text[index])
                index += 1
            } else if text[index] == ".", let path = parsePath(text, from: index + 1) {
                out += "." + path.components.joined(separator: ".")
                index = path.end
            } else {
                break
            }
        }
        if index == text.count { return out }
        for joint in [" -> ", " & "] where text[index...].starts(with: Array(joint)) {
            guard let rest = type(Array(text[(index + joint.count)...]), keepFunctionTypes: keepFunctionTypes) else {
                return nil
            }
            return out + joint + rest
        }
        return nil
    }

    /// Words that may stand before a type.
    static let typeKeywords = [
        "let ", "inout ", "__owned ", "__shared ", "owned ", "borrowing ", "consuming ", "sending ",
        "isolated ", "some ", "any ", "__setter_context ", "__ownership ", "nonisolated ",
    ].map { Array($0) }

    /// Effects between a function type's parameters and its arrow.
    static let functionEffects = [" async", " throws(", " throws", " rethrows"].map { Array($0) }

    /// A list of types or labelled tuple elements, separated by `, `.
    static func typeList(_ text: Text, keepFunctionTypes: Bool = false) -> String? {
        var out: [String] = []
        for element in splitTopLevel(text, Array(", ")) {
            if let colon = firstTopLevel(element, Array(": ")), isIdentifier(element[..<colon]) {
                guard let simple = type(Array(element[(colon + 2)...]), keepFunctionTypes: keepFunctionTypes) else {
                    return nil
                }
                out.append(String(element[..<colon]) + ": " + simple)
            } else if let colon = firstTopLevel(element, Array(" : ")) {
                // A dictionary type already sugared `[K : V]`.
                guard let key = type(Array(element[..<colon]), keepFunctionTypes: keepFunctionTypes),
                    let value = type(Array(element[(colon + 3)...]), keepFunctionTypes: keepFunctionTypes)
                else { return nil }
                out.append(key + " : " + value)
            } else {
                guard let simple = element.isEmpty ? "" : type(element, keepFunctionTypes: keepFunctionTypes) else {
                    return nil
                }
                out.append(simple)
            }
        }
        return out.joined(separator: ", ")
    }

    /// A parsed type path printed simplified: the module dropped, `Swift.Array<T>` as `[T]` etc.
    static func pathType(_ path: Path) -> String {
        var components = path.components
        if path.firstIsGenericParameter, components.count >= 4 {
            // `A.Swift.Collection.Index`: a member qualified by its protocol, whose module goes.
            components.remove(at: 1)
        }
        if components.count >= 2, !path.firstIsGenericParameter, components[0] != "Builtin" {
            let module = components.removeFirst()
            if module == "Swift", let sugared = sugar(components[0]) { components[0] = sugared }
        }
        return components.joined(separator: ".")
    }

    /// `Array<T>` as `[T]`, `Optional<T>` as `T?`, `Dictionary<K, V>` as `[K : V]` (already simplified arguments).
    static func sugar(_ component: String) -> String? {
        let text = Array(component)
        guard let open = text.firstIndex(of: "<"), text.last == ">" else { return nil }
        let name = String(text[..<open])
        let arguments = splitTopLevel(Array(text[(open + 1)..<(text.count - 1)]), Array(", ")).map { String($0) }
        switch (name, arguments.count) {
        case ("Array", 1): return "[" + arguments[0] + "]"
        case ("Dictionary", 2): return "[" + arguments[0] + " : " + arguments[1] + "]"
        case ("Optional", 1):
            let argument = arguments[0]
            let needsParentheses = !(topLevelOccurrences(Array(argument), [" "]) ?? []).isEmpty
            return needsParentheses ? "(" + argument + ")?" : argument + "?"
        default: return nil
        }
    }

    // MARK: Characters and brackets

    static func isIdentifierCharacter(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || character == "_" || character == "$" || character == "τ"
    }

    static func isIdentifier(_ text: ArraySlice<Character>) -> Bool {
        guard let first = text.first, !first.isNumber else { return false }
        return text.allSatisfy(isIdentifierCharacter)
    }

    /// Generic parameter names as the demangler prints them: `A`, `B1`, `τ_0_0`, and `Self`.
    static func isGenericParameter(_ name: String) -> Bool {
        if name == "Self" || name.hasPrefix("τ_") { return true }
        guard let first = name.unicodeScalars.first, ("A"..."Z").contains(first) else { return false }
        return name.unicodeScalars.dropFirst().allSatisfy { ("0"..."9").contains($0) }
    }

    static let operatorCharacters = Set("/=-+!*%<>&|^~?.")
    static let operatorFixities = [" infix", " prefix", " postfix"].map { Array($0) }

    /// Length of an operator name such as `== infix` or `..< infix` starting at `index`, if one does.
    static func operatorLength(_ text: Text, _ index: Int) -> Int? {
        var end = index
        while end < text.count, operatorCharacters.contains(text[end]) { end += 1 }
        guard end > index else { return nil }
        for fixity in operatorFixities where text[end...].starts(with: fixity) { return end - index + fixity.count }
        return nil
    }

    /// Whether the `<` or `>` at `index` belongs to an operator name (`< infix`) or an arrow.
    static func isOperatorAngle(_ text: Text, _ index: Int) -> Bool {
        if text[index] == ">", index > 0, text[index - 1] == "-" { return true }
        var start = index
        while start > 0, operatorCharacters.contains(text[start - 1]) { start -= 1 }
        for candidate in stride(from: index, through: start, by: -1) where isOperatorStart(text, candidate) {
            if let length = operatorLength(text, candidate), index < candidate + length { return true }
        }
        return false
    }

    /// Whether an operator name may start at `index`: at the start, after a space or after the `.`
    /// that ends a path component.
    static func isOperatorStart(_ text: Text, _ index: Int) -> Bool {
        if index == 0 || text[index - 1] == " " { return true }
        return text[index - 1] == "." && index >= 2 && !operatorCharacters.contains(text[index - 2])
    }

    /// Index of the bracket closing the one at `open`, or nil when the brackets do not balance.
    static func matching(_ text: Text, _ open: Int) -> Int? {
        var stack: [Character] = []
        var index = open
        while index < text.count {
            let character = text[index]
            switch character {
            case "(", "[", "{": stack.append(character)
            case "<" where !isOperatorAngle(text, index): stack.append(character)
            case ")", "]", "}", ">":
                if character == ">", isOperatorAngle(text, index) { break }
                guard let top = stack.popLast(), closer(of: top) == character else { return nil }
                if stack.isEmpty { return index }
            default: break
            }
            index += 1
        }
        return nil
    }

    static func closer(of opening: Character) -> Character {
        switch opening {
        case "(": return ")"
        case "[": return "]"
        case "{": return "}"
        default: return ">"
        }
    }

    /// Start indices of `pattern` outside all brackets, or nil when the brackets do not balance.
    static func topLevelOccurrences(_ text: Text, _ pattern: Text) -> [Int]? {
        var found: [Int] = []
        var depth = 0
        var index = 0
        while index < text.count {
            if depth == 0, text[index...].starts(with: pattern) {
                found.append(index)
                index += pattern.count
                continue
            }
            switch text[index] {
            case "(", "[", "{": depth += 1
            case "<" where !isOperatorAngle(text, index): depth += 1
            case ")", "]", "}": depth -= 1
            case ">" where !isOperatorAngle(text, index): depth -= 1
            default: break
            }
            guard depth >= 0 else { return nil }
            index += 1
        }
        return depth == 0 ? found : nil
    }

    static func firstTopLevel(_ text: Text, _ pattern: Text) -> Int? {
        topLevelOccurrences(text, pattern)?.first
    }

    static func lastTopLevel(_ text: Text, _ pattern: Text) -> Int? {
        topLevelOccurrences(text, pattern)?.last
    }

    /// `text` split at `separator` outside brackets (the whole text when the brackets do not balance).
    static func splitTopLevel(_ text: Text, _ separator: Text) -> [Text] {
        guard let cuts = topLevelOccurrences(text, separator), !cuts.isEmpty else { return [text] }
        var parts: [Text] = []
        var start = 0
        for cut in cuts {
            parts.append(Array(text[start..<cut]))
            start = cut + separator.count
        }
        parts.append(Array(text[start...]))
        return parts
    }
}
