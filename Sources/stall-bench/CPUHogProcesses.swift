import Foundation

/// CPU-bound processes (shell loops) that load the machine while a figure measures.
enum CPUHogProcesses {
    /// Starts `count` of them; the returned closure ends them (and waits for each).
    static func start(_ count: Int) throws -> () -> Void {
        var hogs: [Process] = []
        let stop = {
            for hog in hogs {
                hog.terminate()
                hog.waitUntilExit()
            }
        }
        do {
            for _ in 0..<count {
                let hog = Process()
                hog.executableURL = URL(fileURLWithPath: "/bin/sh")
                hog.arguments = ["-c", "while :; do :; done"]
                try hog.run()
                hogs.append(hog)
            }
        } catch {
            stop()
            throw error
        }
        return stop
    }

    /// Runs `body` with `count` of them running.
    static func running<T>(_ count: Int, _ body: () throws -> T) throws -> T {
        let stop = try start(count)
        defer { stop() }
        return try body()
    }
}
