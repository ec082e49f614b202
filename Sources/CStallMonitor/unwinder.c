// Unwinding away from the sampled thread: a DWARF CFI unwinder driven by our own register and
// memory callbacks over a snapshot, the registers and a copy of the stack bytes above the stack
// pointer. A snapshot comes from the sampling signal handler (a thread running on a CPU) or, for
// a thread asleep in the kernel, from its `/proc` syscall file and a copy of its frozen user
// stack made here (CStallMonitor_copy_own_memory): that thread is never signalled. Two backends walk the
// copy: elfutils' libdw (unwinder_libdw.c) and libunwind's remote API (unwinder_libunwind.c, x86_64);
// this file holds what they share: the session, the executable mappings, the frame-pointer
// recovery for threads asleep in the kernel. Runs on the watchdog; never inside a signal handler.
#include "CStallMonitor.h"
#include "unwinder_backend.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef CStallMonitorExecRange exec_range;


// MARK: - Executable mappings (from /proc/self/maps: no loader lock, which a stalled thread
// inside dlopen may hold)

static int compare_ranges(const void *a, const void *b) {
    const exec_range *left = a, *right = b;
    return left->start < right->start ? -1 : left->start > right->start;
}

static void read_exec_ranges(CStallMonitorUnwinder *session) {
    session->range_count = 0;
    FILE *maps = fopen("/proc/self/maps", "re");
    if (maps == NULL) return;
    char line[512];
    while (fgets(line, sizeof(line), maps) != NULL && session->range_count < CSM_MAX_EXEC_RANGES) {
        unsigned long start = 0, end = 0;
        char permissions[8] = {0};
        if (sscanf(line, "%lx-%lx %7s", &start, &end, permissions) != 3) continue;
        if (permissions[2] != 'x') continue;
        session->ranges[session->range_count++] = (exec_range){(uintptr_t)start, (uintptr_t)end};
    }
    fclose(maps);
    qsort(session->ranges, (size_t)session->range_count, sizeof(exec_range), compare_ranges);
}

const void *CStallMonitor_find_range(const void *entries, int count, size_t stride, uintptr_t address) {
    int low = 0, high = count - 1;
    while (low <= high) {
        int middle = low + (high - low) / 2;
        const CStallMonitorExecRange *range = (const void *)((const char *)entries + (size_t)middle * stride);
        if (address < range->start) {
            high = middle - 1;
        } else if (address >= range->end) {
            low = middle + 1;
        } else {
            return range;
        }
    }
    return NULL;
}

static int in_exec_range(const CStallMonitorUnwinder *session, uintptr_t address) {
    return CStallMonitor_find_range(session->ranges, session->range_count, sizeof(exec_range), address) != NULL;
}

int CStallMonitor_unwinder_is_code(const CStallMonitorUnwinder *session, uintptr_t address) {
    return in_exec_range(session, address);
}

// MARK: - Reading memory

int CStallMonitor_unwinder_read_own_memory(uintptr_t address, void *into, size_t size) {
    return CStallMonitor_copy_own_memory(address, into, size) == (ssize_t)size;
}

static int read_own_memory(uintptr_t address, void *into, size_t size) {
    return CStallMonitor_unwinder_read_own_memory(address, into, size);
}

/// Whether `size` bytes at `address` lie in the snapshot's stack copy (without overflow for any
/// address: the unwinder follows values read from the stack).
static int in_copy(const CStallMonitorSnapshot *snapshot, uintptr_t address, size_t size) {
    return address >= snapshot->sp && snapshot->stack_size >= size && address - snapshot->sp <= snapshot->stack_size - size;
}

int CStallMonitor_unwinder_stack_word(const CStallMonitorSnapshot *snapshot, uintptr_t address, uint64_t *value) {
    if (in_copy(snapshot, address, sizeof(uint64_t))) {
        memcpy(value, snapshot->stack + (address - snapshot->sp), sizeof(uint64_t));
        return 1;
    }
    if (snapshot->stack_high != 0 && address < snapshot->stack_high &&
        (address >= snapshot->stack_low || snapshot->stack_low - address < sizeof(uint64_t))) {
        return 0;
    }
    return -1;
}

// MARK: - Sessions

static const CStallMonitorUnwinderBackend *backend_named(int backend) {
#if defined(__x86_64__)
    if (backend == CStallMonitorUnwinderLibunwind) return &CStallMonitor_libunwind_backend;
#endif
    return backend == CStallMonitorUnwinderLibdw ? &CStallMonitor_libdw_backend : NULL;
}

CStallMonitorUnwinder *CStallMonitor_unwinder_open(int backend, char *error, size_t error_size) {
    const CStallMonitorUnwinderBackend *chosen = backend_named(backend);
    if (chosen == NULL) {
        snprintf(error, error_size, "this unwinder is not available on this architecture");
        return NULL;
    }
    CStallMonitorUnwinder *session = calloc(1, sizeof(*session));
    if (session == NULL) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    session->pid = getpid();
    session->backend = chosen;
    read_exec_ranges(session);
    if (chosen->open(session, error, error_size) != 0) {
        free(session);
        return NULL;
    }
    return session;
}

void CStallMonitor_unwinder_close(CStallMonitorUnwinder *session) {
    if (session == NULL) return;
    session->backend->close(session);
    free(session);
}

const char *CStallMonitor_unwinder_name(const CStallMonitorUnwinder *session) {
    return session->backend->name;
}

int CStallMonitor_unwinder_record_frame(CStallMonitorUnwinder *session, uintptr_t pc, int activation, uintptr_t sp) {
    // A return address is the instruction after a call: the call itself lies in code.
    uintptr_t code_address = activation || session->count == 0 ? pc : pc - 1;
    if (!in_exec_range(session, code_address)) {
        session->stopped_outside_code = 1;
        return 0;
    }
    if (session->count == session->capacity) return 0;
    session->frames[session->count++] = pc;
    session->last_sp = sp;
    return 1;
}

/// One walk over the snapshot; the result in the session's frames, count and last_sp.
static int walk(CStallMonitorUnwinder *session, pid_t tid, const CStallMonitorSnapshot *snapshot) {
    session->snapshot = snapshot;
    session->count = 0;
    session->stopped_outside_code = 0;
    session->last_sp = 0;
    int whole = session->backend->walk(session, tid, snapshot);
    session->snapshot = NULL;
    return whole;
}

static int recover_frame_pointer(CStallMonitorUnwinder *session, pid_t tid, const CStallMonitorSnapshot *snapshot,
                                 uintptr_t *frame_pointer);

int CStallMonitor_unwinder_unwind(CStallMonitorUnwinder *session, pid_t tid,
                                  const CStallMonitorSnapshot *snapshot, uintptr_t *frames,
                                  int capacity, int *count, int *complete) {
    *count = 0;
    *complete = 0;
    if (session == NULL || snapshot == NULL || capacity <= 0) return -1;
    if (!in_exec_range(session, snapshot->pc)) {
        // The leaf is outside every executable mapping the session knows: a library loaded since
        // it opened (the caller re-opens) or not code at all.
        return CStallMonitorUnwindUnknownCode;
    }
    session->frames = frames;
    session->capacity = capacity;
    int done = walk(session, tid, snapshot);
    if (!done && FRAME_POINTER_REG >= 0 && !(snapshot->valid & (1ull << FRAME_POINTER_REG)) && session->count > 0 &&
        session->last_sp != 0) {
        // Only SP and PC are known (a thread asleep in the kernel). CFI relative to SP (release
        // code, the C library) got as far as the first frame whose CFA is relative to its frame
        // pointer (debug code): recover that frame's frame pointer and walk again.
        uintptr_t frame_pointer = 0;
        if (recover_frame_pointer(session, tid, snapshot, &frame_pointer)) {
            CStallMonitorSnapshot guessed = *snapshot;
            guessed.valid |= 1ull << FRAME_POINTER_REG;
            guessed.regs[FRAME_POINTER_REG] = frame_pointer;
            done = walk(session, tid, &guessed);
        } else {
            done = walk(session, tid, snapshot);
        }
    }
    *count = session->count;
    *complete = done;
    if (session->stopped_outside_code && session->count == 0) return CStallMonitorUnwindUnknownCode;
    return CStallMonitorUnwindDone;
}

// MARK: - Snapshots of a thread asleep in the kernel

int CStallMonitor_current_stack_bounds(uintptr_t *low, uintptr_t *high) {
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) != 0) return -1;
    void *address = NULL;
    size_t size = 0;
    int result = pthread_attr_getstack(&attributes, &address, &size);
    pthread_attr_destroy(&attributes);
    if (result != 0) return -1;
    *low = (uintptr_t)address;
    *high = (uintptr_t)address + size;
    return 0;
}

// MARK: - The frame pointer of a thread asleep in the kernel
//
// The kernel's syscall file gives SP and PC only. The walk above stops at the first function whose
// CFA is its frame pointer; call it f, with SP known. f's frame record (the caller's saved frame
// pointer, then f's return address) lies above that SP, but so may stale records left by earlier
// calls in f's uninitialised locals (sanitizer builds leave many). A record is taken only when the
// code agrees: f's prologue says how far above SP its frame pointer lies, or the call instruction
// before the record's return address calls f.

enum { CALL_OTHER = -1, CALL_UNKNOWN = 0, CALL_REACHES = 1 };

/// Start of the function containing `address` (from the backend: an ELF symbol, an FDE); 0 when
/// unknown.
static uintptr_t function_start(CStallMonitorUnwinder *session, uintptr_t address) {
    return session->backend->function_start(session, address);
}

#if defined(__x86_64__)
static int32_t read_i32(const uint8_t *bytes) {
    int32_t value;
    memcpy(&value, bytes, 4);
    return value;
}

/// For a function with the usual frame-pointer prologue (endbr64; push %rbp; mov %rsp,%rbp; pushes
/// of callee-saved registers; sub $N,%rsp), how far above its stack pointer at a call its frame
/// pointer lies; -1 for any other prologue (no frame pointer, a realigned stack, no fixed frame).
static long frame_pointer_distance(CStallMonitorUnwinder *session, uintptr_t start) {
    uint8_t code[40];
    if (start == 0 || !in_exec_range(session, start) || !read_own_memory(start, code, sizeof(code))) return -1;
    size_t at = 0;
    if (memcmp(code, "\xf3\x0f\x1e\xfa", 4) == 0) at = 4;
    if (code[at] != 0x55) return -1;
    at += 1;
    if (memcmp(code + at, "\x48\x89\xe5", 3) != 0 && memcmp(code + at, "\x48\x8b\xec", 3) != 0) return -1;
    at += 3;
    long pushed = 0;
    while (at + 2 <= sizeof(code) - 8) {
        if (code[at] == 0x41 && code[at + 1] >= 0x50 && code[at + 1] <= 0x57) {
            at += 2;
        } else if (code[at] >= 0x50 && code[at] <= 0x57 && code[at] != 0x54 && code[at] != 0x55) {
            at += 1;
        } else {
            break;
        }
        pushed += 8;
    }
    if (code[at] == 0x48 && code[at + 1] == 0x83 && code[at + 2] == 0xec) return pushed + code[at + 3];
    if (code[at] == 0x48 && code[at + 1] == 0x81 && code[at + 2] == 0xec) {
        int32_t size = read_i32(code + at + 3);
        return size >= 0 && size < 4096 ? pushed + size : -1;  // larger frames are probed page by page
    }
    return -1;
}

/// Where a jump stub at `address` leads (a PLT entry, an interceptor trampoline); 0 if it is none.
static uintptr_t stub_target(CStallMonitorUnwinder *session, uintptr_t address) {
    uint8_t code[16];
    if (!in_exec_range(session, address) || !read_own_memory(address, code, sizeof(code))) return 0;
    size_t at = 0;
    if (memcmp(code, "\xf3\x0f\x1e\xfa", 4) == 0) at = 4;
    if (code[at] == 0xf2) at += 1;  // bnd prefix
    if (code[at] == 0xff && code[at + 1] == 0x25) {
        uintptr_t slot = address + at + 6 + (intptr_t)read_i32(code + at + 2);
        uint64_t target = 0;
        return read_own_memory(slot, &target, sizeof(target)) ? (uintptr_t)target : 0;
    }
    if (code[at] == 0xe9) return address + at + 5 + (intptr_t)read_i32(code + at + 1);
    return 0;
}

/// Whether the call instruction that `return_address` follows called the function at `start`,
/// directly or through a PLT entry or trampoline.
static int call_reaches(CStallMonitorUnwinder *session, uintptr_t return_address, uintptr_t start) {
    uint8_t code[6];
    if (start == 0 || !read_own_memory(return_address - 6, code, sizeof(code))) return CALL_UNKNOWN;
    uintptr_t callee = 0;
    if (code[1] == 0xe8) {
        callee = return_address + (intptr_t)read_i32(code + 2);
    } else if (code[0] == 0xff && code[1] == 0x15) {
        uint64_t target = 0;
        uintptr_t slot = return_address + (intptr_t)read_i32(code + 2);
        if (!read_own_memory(slot, &target, sizeof(target))) return CALL_UNKNOWN;
        callee = (uintptr_t)target;
    } else {
        return CALL_UNKNOWN;  // an indirect call through a register or memory
    }
    for (int hop = 0; hop < 4 && callee != 0; hop++) {
        if (callee == start) return CALL_REACHES;
        callee = stub_target(session, callee);
    }
    return CALL_OTHER;
}
#else
static long frame_pointer_distance(CStallMonitorUnwinder *session, uintptr_t start) {
    (void)session;
    (void)start;
    return -1;
}

static int call_reaches(CStallMonitorUnwinder *session, uintptr_t return_address, uintptr_t start) {
    (void)session;
    (void)return_address;
    (void)start;
    return CALL_UNKNOWN;
}
#endif

/// Whether `slot` holds a plausible frame record: a saved frame pointer higher on the copied stack
/// next to a return address into code, and the record it points to plausible too.
static int is_frame_record(const CStallMonitorUnwinder *session, const CStallMonitorSnapshot *snapshot,
                           uintptr_t slot, uintptr_t *return_address) {
    if (!in_copy(snapshot, slot, 16) || (slot & 7) != 0) return 0;
    uint64_t saved = 0, returned = 0;
    memcpy(&saved, snapshot->stack + (slot - snapshot->sp), 8);
    memcpy(&returned, snapshot->stack + (slot + 8 - snapshot->sp), 8);
    if (saved <= slot || !in_copy(snapshot, (uintptr_t)saved, 16) || (saved & 7) != 0) return 0;
    if (!in_exec_range(session, (uintptr_t)returned - 1)) return 0;
    uint64_t outer_saved = 0, outer_return = 0;
    memcpy(&outer_saved, snapshot->stack + (saved - snapshot->sp), 8);
    memcpy(&outer_return, snapshot->stack + (saved + 8 - snapshot->sp), 8);
    int outer_ok = (outer_saved == 0 || (outer_saved > saved && outer_saved < snapshot->stack_high)) &&
                   (outer_return == 0 || in_exec_range(session, (uintptr_t)outer_return - 1));
    if (!outer_ok) return 0;
    *return_address = (uintptr_t)returned;
    return 1;
}

/// The frame pointer of the last frame the first walk reached (f): the record its prologue
/// predicts or the first record above f's SP, whichever first has a call instruction that calls
/// f; else the first of those whose call cannot be read (an indirect call) and whose walk reaches
/// the thread's entry. 0 if none.
static int recover_frame_pointer(CStallMonitorUnwinder *session, pid_t tid, const CStallMonitorSnapshot *snapshot,
                                 uintptr_t *frame_pointer) {
    uintptr_t sp = session->last_sp;
    uintptr_t pc = session->frames[session->count - 1];
    uintptr_t start = function_start(session, session->count > 1 ? pc - 1 : pc);
    uintptr_t return_address = 0;

    uintptr_t unverified[9];
    int unverified_count = 0;
    long distance = frame_pointer_distance(session, start);
    if (distance >= 0 && is_frame_record(session, snapshot, sp + (uintptr_t)distance, &return_address)) {
        int reaches = call_reaches(session, return_address, start);
        if (reaches == CALL_REACHES) {
            *frame_pointer = sp + (uintptr_t)distance;
            return 1;
        }
        // The prediction assumes a fixed frame; unconfirmed by the call, it must prove itself.
        if (reaches == CALL_UNKNOWN) unverified[unverified_count++] = sp + (uintptr_t)distance;
    }
    uintptr_t copy_end = snapshot->sp + snapshot->stack_size;
    for (uintptr_t slot = (sp + 7) & ~(uintptr_t)7; slot + 16 <= copy_end; slot += 8) {
        if (!is_frame_record(session, snapshot, slot, &return_address)) continue;
        int reaches = call_reaches(session, return_address, start);
        if (reaches == CALL_REACHES) {
            *frame_pointer = slot;
            return 1;
        }
        if (reaches == CALL_UNKNOWN && unverified_count < 9 && (unverified_count == 0 || unverified[0] != slot)) {
            unverified[unverified_count++] = slot;
        }
    }
    CStallMonitorSnapshot guessed = *snapshot;
    guessed.valid |= 1ull << FRAME_POINTER_REG;
    for (int i = 0; i < unverified_count; i++) {
        guessed.regs[FRAME_POINTER_REG] = unverified[i];
        if (walk(session, tid, &guessed)) {
            *frame_pointer = unverified[i];
            return 1;
        }
    }
    return 0;
}

int CStallMonitor_snapshot_blocked(uintptr_t sp, uintptr_t pc, CStallMonitorSnapshot *snapshot) {
    snapshot->valid = 0;
    snapshot->sp = sp;
    snapshot->pc = pc;
    snapshot->stack_size = 0;
    if (sp < snapshot->stack_low || sp >= snapshot->stack_high) return -ERANGE;
    size_t available = snapshot->stack_high - sp;
    size_t size = available < snapshot->stack_capacity ? available : snapshot->stack_capacity;
    ssize_t copied = CStallMonitor_copy_own_memory(sp, snapshot->stack, size);
    if (copied <= 0) return copied < 0 ? (int)copied : -EFAULT;
    snapshot->stack_size = (size_t)copied & ~(size_t)7;
    if (STACK_POINTER_REG < 0) return -ENOTSUP;
    snapshot->regs[STACK_POINTER_REG] = sp;
    snapshot->valid |= 1ull << STACK_POINTER_REG;
    return 0;
}
