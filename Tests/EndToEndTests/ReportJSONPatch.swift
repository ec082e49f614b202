import Foundation

/// Rewrites one value of a report's JSON text to any literal JSON number text (`1e308`, `1e400`,
/// `9223372036854775807`), which an encoder of `Double`s cannot always write.
enum ReportJSONPatch {
    private static let placeholder = "__PATCHED_VALUE__"

    /// `json` with the value at `keyPath` (keys separated by `.`, array indices as numbers,
    /// `*` for every element of an array) replaced by `literal`.
    static func patch(_ json: Data, keyPath: String, literal: String) throws -> Data {
        var object = try JSONSerialization.jsonObject(with: json)
        object = set(object, path: keyPath.split(separator: ".").map(String.init)[...])
        let text = String(
            decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
        return Data(text.replacingOccurrences(of: "\"\(placeholder)\"", with: literal).utf8)
    }

    private static func set(_ value: Any, path: ArraySlice<String>) -> Any {
        guard let key = path.first else { return placeholder }
        if var array = value as? [Any] {
            let indices = key == "*" ? Array(array.indices) : Int(key).map { [$0] } ?? []
            for index in indices where array.indices.contains(index) {
                array[index] = set(array[index], path: path.dropFirst())
            }
            return array
        }
        if var dictionary = value as? [String: Any] {
            dictionary[key] = set(dictionary[key] ?? [String: Any](), path: path.dropFirst())
            return dictionary
        }
        return value
    }
}
