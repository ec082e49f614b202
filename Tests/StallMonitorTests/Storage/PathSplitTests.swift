import Foundation
import StallReportModel
import Testing

/// `AtomicFileWriter` splits the paths it writes without `NSString`; the parts must be the ones
/// `NSString` gives.
@Suite("Path split")
struct PathSplitTests {
    @Test("directory and name as NSString's deletingLastPathComponent and lastPathComponent give them")
    func sameAsNSString() {
        let paths = [
            "/tmp/reports/stall-1.json", "reports/session-2.session", "name.json", "/name.json", "/a/b/", "a//b",
            "/tmp/dir with space/ünï.json", "./x", "../up/x.json", "/a/b//c.json",
        ]
        for path in paths {
            let split = AtomicFileWriter.split(path)
            #expect(split.directory == (path as NSString).deletingLastPathComponent, "\(path)")
            #expect(split.name == (path as NSString).lastPathComponent, "\(path)")
        }
    }
}
