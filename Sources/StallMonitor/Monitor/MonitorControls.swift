import Synchronization

/// What the host app tells a running monitor: pause/resume, the current scene.
final class MonitorControls: Sendable {
    /// Pause depth (pause/resume may nest).
    let pauseDepth = Atomic<Int>(0)
    private let currentScene = Locked<String?>(nil)

    var isPaused: Bool { pauseDepth.load(ordering: .acquiring) > 0 }

    var scene: String? {
        get { currentScene.withLock { $0 } }
        set { currentScene.withLock { $0 = newValue } }
    }
}
