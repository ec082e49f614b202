// The names the documented snippets use without declaring them (a report folder, the app's own
// functions and types), declared once here so the snippets compile as written. Nothing here runs.
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// The report folder `AvoidingStalls.md` passes as `reports`.
let reports = URL(fileURLWithPath: "stall-reports")

/// The app's logger `AvoidingStalls.md` calls `log`.
let log = Logger(label: "app")

/// A row of a list (`AvoidingStalls.md`): shown, it wants a thumbnail; scrolled away, it cancels it.
final class Row: Sendable {
    /// The row's identity, used as the thumbnail work's label.
    let id: Int
    /// What to do when the row scrolls away; guarded, since rows are touched from any thread.
    private let disappearAction = Mutex<(@Sendable () -> Void)?>(nil)

    /// A row with identity `id`.
    init(id: Int) { self.id = id }

    /// What to do when the row scrolls away.
    var onDisappear: (@Sendable () -> Void)? {
        get { disappearAction.withLock { $0 } }
        set { disappearAction.withLock { $0 = newValue } }
    }
}

/// Renders a row's thumbnail (`AvoidingStalls.md`).
func renderThumbnail(_ row: Row) {}

/// The cache a resident thread warms (`AvoidingStalls.md`).
final class ThumbnailCache: Sendable {
    /// Fills the cache.
    func warm() {}
    /// The number of cached thumbnails.
    var count: Int { 0 }
}

/// The cache `AvoidingStalls.md` calls `cache`.
let cache = ThumbnailCache()

/// Decodes something on a resident thread (`WatchingARunLoop.md`).
func decode() {}

/// Long work the user asked for (`InProduction.md`).
func loadTheDocumentTheUserAskedFor() throws {}

/// Work during which stalls are not reported (`InProduction.md`).
func runMigration() {}

/// The work the testing articles put under a stall budget.
func parseLargeDocument() throws {}

/// Work a test runs on a loop of its own (`StallBudgets.md`).
func decodeSmallDocument() {}

/// Work a test runs on a loop of its own (`StallMonitorTesting.md`, `StallMonitorXCTest.md`).
func decodeLargeDocument() {}

/// A request served by a server on SwiftNIO's event loops (`StallMonitorTesting.md`).
func serveOneRequest() async throws {}

/// The app's own service that a `ServiceGroup` runs next to the monitor (`StallMonitorServiceLifecycle.md`).
struct MyHTTPService: Service {
    /// Serves until the group shuts down.
    func run() async throws {}
}

/// A profile the app loads (`FindingBlockingCalls.md`).
struct Profile: Sendable {
    /// The profile's name.
    var name: String
}

/// Where the app keeps profiles (`FindingBlockingCalls.md`).
struct ProfileStore: Sendable {
    /// Loads a profile.
    func profile(id: Int) async throws -> Profile { Profile(name: "Ada") }
}

/// Renders a page (`FindingBlockingCalls.md`).
struct PageRenderer: Sendable {
    /// The page's HTML.
    func render() async throws -> String { "" }
}

/// Reads a whole file synchronously (`FindingBlockingCalls.md`).
func readWholeFile(_ path: String) throws -> [UInt8] { [] }
