import Foundation
import Testing

@testable import StallReportKit

@Suite("JSON nesting pre-check")
struct JSONNestingTests {
    @Test("Counts arrays and objects, ignoring brackets inside strings and escaped quotes")
    func depth() {
        #expect(JSONNesting.maxDepth(of: Data(#"{"a":[1,{"b":[]}]}"#.utf8)) == 4)
        #expect(JSONNesting.maxDepth(of: Data(#"{"a":"[[[[{{{{"}"#.utf8)) == 1)
        #expect(JSONNesting.maxDepth(of: Data(#"{"a":"\"[[[[","b":[1]}"#.utf8)) == 2)
        #expect(JSONNesting.maxDepth(of: Data("42".utf8)) == 0)
    }

    @Test("Stops as soon as the limit is passed (100 000 '[')")
    func stopsEarly() {
        let data = Data(repeating: UInt8(ascii: "["), count: 100_000)
        let shape = JSONNesting.shape(of: data, limit: 512)
        #expect(shape.stoppedAtLimit)
        #expect(shape.maxDepth == 513)
    }

    @Test("Tells a truncated document from a complete one")
    func truncation() {
        #expect(JSONNesting.shape(of: Data(#"{"a":[1,2"#.utf8)).endDepth == 2)
        #expect(JSONNesting.shape(of: Data(#"{"a":"abc"#.utf8)).endsInsideString)
        let complete = JSONNesting.shape(of: Data(#"{"a":[1,2]}"#.utf8))
        #expect(complete.endDepth == 0 && !complete.endsInsideString && !complete.stoppedAtLimit)
    }

    @Test("Binary data is recognised")
    func binary() {
        #expect(JSONNesting.looksBinary(Data([0x7b, 0x00, 0x7d])))
        #expect(JSONNesting.looksBinary(Data([0xff, 0xfe, 0xfd])))
        #expect(!JSONNesting.looksBinary(Data(#"{"é":1}"#.utf8)))
    }
}
