import Foundation
import Glibc

/// A blocking HTTP/1.1 client over a real TCP connection to 127.0.0.1 (keep-alive), written with
/// plain sockets: nothing of SwiftNIO on the client side. One thread at a time uses it.
final class HTTPTestClient: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let fd: Int32
    private var pending: [UInt8] = []

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let error = errno
            close(fd)
            throw Failure(description: "connect to port \(port): errno \(error)")
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit {
        close(fd)
    }

    /// Sends `GET path` and returns the response body (status 200 expected).
    func get(_ path: String) throws -> String {
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        var sent = 0
        while sent < request.count {
            let count = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw Failure(description: "send: errno \(errno)") }
            sent += count
        }
        let headerEnd = try readUntil(Array("\r\n\r\n".utf8))
        let head = String(decoding: pending[..<headerEnd], as: UTF8.self)
        pending.removeFirst(headerEnd + 4)
        guard head.hasPrefix("HTTP/1.1 200") else { throw Failure(description: "response: \(head)") }
        let length =
            head.split(separator: "\r\n")
            .first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
        while pending.count < length { try receive() }
        let body = String(decoding: pending[..<length], as: UTF8.self)
        pending.removeFirst(length)
        return body
    }

    private func readUntil(_ marker: [UInt8]) throws -> Int {
        while true {
            if pending.count >= marker.count {
                for start in 0...(pending.count - marker.count)
                where pending[start..<(start + marker.count)].elementsEqual(marker) {
                    return start
                }
            }
            try receive()
        }
    }

    private func receive() throws {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count < 0 && errno == EINTR { return }
        guard count > 0 else { throw Failure(description: count == 0 ? "connection closed" : "recv: errno \(errno)") }
        pending.append(contentsOf: buffer[..<count])
    }
}
