import CStallMonitor

/// Turns the C recorder's records into ``BlockingCall`` values: names each return address with
/// the process's symbolicator (the call instruction, one byte before it) and each async caller
/// by its resume function's entry, and leaves out calls whose stack or async callers pass through
/// an allowed function, and waits on locks an allowed owner took (``LockWaitOwner``).
enum BlockingCallNaming {
    static func calls(
        from records: [CStallMonitorBlockingRecord], allowing allowed: [String], lockOwners: [String] = []
    ) -> [BlockingCall] {
        guard !records.isEmpty else { return [] }
        let stacks = records.map { record in
            withUnsafeBytes(of: record.frames) { bytes in
                Array(bytes.bindMemory(to: UInt.self).prefix(Int(record.frame_count)))
            }
        }
        var code = ExecutableRanges()
        let now = Kernel.monotonicNanoseconds()
        // A chain is kept only when every resume function lies in an executable mapping.
        let chains = records.map { record -> [UInt] in
            let callers = withUnsafeBytes(of: record.async_callers) { bytes in
                Array(bytes.bindMemory(to: UInt.self).prefix(Int(record.async_caller_count)))
            }
            return callers.allSatisfy { code.contains($0, now: now) } ? callers : []
        }
        let images = LoadedImages.capture().entries.map { "\($0.path)@\($0.start)" }
        // Return addresses are named by the call instruction (one byte before); resume functions
        // by their entry address.
        let lookups = Array(Set(stacks.joined().map { $0 &- 1 }).union(chains.joined()))
        MonitorProcess.shared.symbolicator.retain()
        defer { MonitorProcess.shared.symbolicator.release() }
        let symbols = MonitorProcess.shared.symbolicator.symbolicate(lookups, images: images)
        func frame(_ address: UInt, lookup: UInt) -> BlockingCall.Frame {
            let symbol = symbols[lookup]
            return BlockingCall.Frame(address: address, function: symbol?.name, file: symbol?.file, line: symbol?.line)
        }
        var calls: [BlockingCall] = []
        for (index, record) in records.enumerated() {
            let frames = stacks[index].map { frame($0, lookup: $0 &- 1) }
            let asyncCallers = chains[index].map { frame($0, lookup: $0) }
            let named = frames + asyncCallers
            if named.contains(where: { frame in allowed.contains { frame.function?.contains($0) ?? false } }) {
                continue
            }
            let name = String(cString: CStallMonitor_blocking_call_name(Int32(record.call)))
            if LockWaitOwner.isAllowed(call: name, frames: frames.map(\.function), owners: lockOwners) { continue }
            var call = BlockingCall(
                call: name,
                duration: .nanoseconds(Int64(record.duration_ns)), startNanoseconds: record.start_ns,
                threadID: record.thread_id, inTask: record.task != 0,
                drainsMainQueue: record.drains_main_queue < 0 ? nil : record.drains_main_queue == 1, frames: frames)
            call.asyncCallers = asyncCallers
            call.asyncCallersFromJobStart =
                !asyncCallers.isEmpty && record.async_chain_source == Int32(CStallMonitorAsyncChainJobStart.rawValue)
            call.asyncCallersReachRoot = asyncCallers.isEmpty || record.async_chain_complete != 0
            calls.append(call)
        }
        return calls
    }
}
