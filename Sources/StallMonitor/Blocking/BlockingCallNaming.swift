import CStallMonitor

/// Turns the C recorder's records into ``BlockingCall`` values: names each return address with
/// the process's symbolicator (the call instruction, one byte before it) and leaves out calls
/// whose stack passes through an allowed function.
enum BlockingCallNaming {
    static func calls(from records: [CStallMonitorBlockingRecord], allowing allowed: [String]) -> [BlockingCall] {
        guard !records.isEmpty else { return [] }
        let stacks = records.map { record in
            withUnsafeBytes(of: record.frames) { bytes in
                Array(bytes.bindMemory(to: UInt.self).prefix(Int(record.frame_count)))
            }
        }
        let images = LoadedImages.capture().entries.map { "\($0.path)@\($0.start)" }
        let lookups = Array(Set(stacks.joined().map { $0 &- 1 }))
        Symbolicator.shared.retain()
        defer { Symbolicator.shared.release() }
        let symbols = Symbolicator.shared.symbolicate(lookups, images: images)
        var calls: [BlockingCall] = []
        for (record, stack) in zip(records, stacks) {
            let frames = stack.map { address in
                let symbol = symbols[address &- 1]
                return BlockingCall.Frame(
                    address: address, function: symbol?.name, file: symbol?.file, line: symbol?.line)
            }
            if frames.contains(where: { frame in allowed.contains { frame.function?.contains($0) ?? false } }) {
                continue
            }
            calls.append(
                BlockingCall(
                    call: String(cString: CStallMonitor_blocking_call_name(Int32(record.call))),
                    duration: .nanoseconds(Int64(record.duration_ns)), startNanoseconds: record.start_ns,
                    threadID: record.thread_id, inTask: record.task != 0,
                    drainsMainQueue: record.drains_main_queue < 0 ? nil : record.drains_main_queue == 1, frames: frames)
            )
        }
        return calls
    }
}
