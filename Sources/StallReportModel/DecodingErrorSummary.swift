import Foundation

extension DecodingError {
    /// One line for people saying what is wrong and where: `missing key 'id' at loop`,
    /// `wrong type at samples.[3].offsetMs`, `null value at …`, or the decoder's own message.
    /// `typeDetail` appends the decoder's explanation to a type mismatch.
    package func summary(typeDetail: Bool = false) -> String {
        func path(_ context: Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            return keys.isEmpty ? "" : " at " + keys.joined(separator: ".")
        }
        switch self {
        case .keyNotFound(let key, let context): return "missing key '\(key.stringValue)'\(path(context))"
        case .typeMismatch(_, let context):
            return "wrong type\(path(context))" + (typeDetail ? ": \(context.debugDescription)" : "")
        case .valueNotFound(_, let context): return "null value\(path(context))"
        case .dataCorrupted(let context): return "\(context.debugDescription)\(path(context))"
        @unknown default: return String(describing: self)
        }
    }
}
