/// A report directory of the test's own and a loopback HTTP server on `loops` event loops. When
/// `body` returns or throws, the server is shut down and then the directory is removed.
func withLoopbackServer<T>(
    loops: Int,
    _ body: (TemporaryReports, LoopbackHTTPServer) throws -> T
) throws -> T {
    let reports = TemporaryReports()
    let server = try LoopbackHTTPServer(loops: loops)
    defer {
        server.shutDown()
        reports.remove()
    }
    return try body(reports, server)
}

/// `withLoopbackServer` for an async test.
func withLoopbackServer<T>(
    loops: Int,
    _ body: (TemporaryReports, LoopbackHTTPServer) async throws -> T
) async throws -> T {
    let reports = TemporaryReports()
    let server = try LoopbackHTTPServer(loops: loops)
    defer {
        server.shutDown()
        reports.remove()
    }
    return try await body(reports, server)
}
