// Stack copies for blocking-call records whose frame-pointer walk stopped short: code without
// frame pointers (a C library built with -fomit-frame-pointer: a database driver, a compression
// library) between the call and the thread's outermost frame breaks the chain, and the record
// would name that library's frame alone. The recorder then copies, on the calling thread, the
// stack from the caller's stack pointer up (at most `copy_size` bytes, a few microseconds) into
// one of a few preallocated buffers; the collector walks the copy with the snapshot unwinder (CFI,
// as for stall reports) and gives the buffer back. With every buffer taken a record keeps its
// frame-pointer stack.
#include "CStallMonitor.h"
#include "blocking.h"
#include "unwinder_backend.h"

#include <stdatomic.h>
#include <string.h>

enum { copy_count = 8, copy_size = 32 * 1024 };

static struct {
    atomic_int used;
    uintptr_t words[copy_size / sizeof(uintptr_t)];
} copies[copy_count];

/// Copies `count` words from `from` (the thread's own stack, above its stack pointer) word by
/// word. Not instrumented by AddressSanitizer: the range crosses other frames' redzones.
__attribute__((no_sanitize("address", "thread")))
static void copy_stack_words(uintptr_t *into, const uintptr_t *from, size_t count) {
    for (size_t index = 0; index < count; index++) into[index] = ((const volatile uintptr_t *)from)[index];
}

void cstallmonitor_blocking_copy_stack(CStallMonitorBlockingRecord *record, uintptr_t frame, uintptr_t stack_high) {
    record->stack_copy = 0;
    record->stack_copy_bytes = 0;
    // The wrapper's frame record is [saved frame pointer, return address]: its caller's stack
    // pointer after the return lies just above it, and the saved word is the caller's frame pointer.
    uintptr_t sp = frame + 2 * sizeof(uintptr_t);
    if (frame == 0 || (frame & 7) != 0 || sp >= stack_high) return;
    for (int index = 0; index < copy_count; index++) {
        int free_copy = 0;
        if (!atomic_compare_exchange_strong(&copies[index].used, &free_copy, 1)) continue;
        size_t bytes = stack_high - sp < copy_size ? stack_high - sp : copy_size;
        copy_stack_words(copies[index].words, (const uintptr_t *)sp, bytes / sizeof(uintptr_t));
        record->caller_sp = sp;
        record->caller_fp = ((const uintptr_t *)frame)[0];
        record->stack_top = stack_high;
        record->stack_copy_bytes = (uint32_t)(bytes & ~(size_t)7);
        record->stack_copy = index + 1;
        return;
    }
}

int CStallMonitor_blocking_stack_copy_snapshot(const CStallMonitorBlockingRecord *record,
                                               CStallMonitorSnapshot *snapshot) {
    int index = record->stack_copy - 1;
    if (index < 0 || index >= copy_count || STACK_POINTER_REG < 0 || record->frame_count == 0) return -1;
    memset(snapshot, 0, sizeof *snapshot);
    snapshot->pc = record->frames[0];
    snapshot->sp = record->caller_sp;
    snapshot->regs[STACK_POINTER_REG] = record->caller_sp;
    snapshot->regs[FRAME_POINTER_REG] = record->caller_fp;
    snapshot->valid = (1ull << STACK_POINTER_REG) | (1ull << FRAME_POINTER_REG);
    snapshot->stack = (uint8_t *)copies[index].words;
    snapshot->stack_capacity = record->stack_copy_bytes;
    snapshot->stack_size = record->stack_copy_bytes;
    // Stack addresses outside the copy are unknown (the thread has run on since), not read.
    snapshot->stack_low = record->caller_sp;
    snapshot->stack_high = record->stack_top;
    return 0;
}

void CStallMonitor_blocking_release_stack_copy(const CStallMonitorBlockingRecord *record) {
    int index = record->stack_copy - 1;
    if (index >= 0 && index < copy_count) atomic_store(&copies[index].used, 0);
}
