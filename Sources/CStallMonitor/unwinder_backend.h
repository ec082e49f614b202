// What the snapshot unwinder's two backends share (unwinder.c drives them): the session, the
// walk contract, and reading a snapshot's memory. Internal to the C shim.
#ifndef CSTALLMONITOR_UNWINDER_BACKEND_H
#define CSTALLMONITOR_UNWINDER_BACKEND_H

#include "CStallMonitor.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CSM_MAX_EXEC_RANGES 4096

/// The DWARF numbers of the frame and stack pointers (-1: an architecture without a walker).
#if defined(__x86_64__)
enum { FRAME_POINTER_REG = 6, STACK_POINTER_REG = 7 };
#elif defined(__aarch64__)
enum { FRAME_POINTER_REG = 29, STACK_POINTER_REG = 31 };
#else
enum { FRAME_POINTER_REG = -1, STACK_POINTER_REG = -1 };
#endif
#if defined(__x86_64__) || defined(__aarch64__)
_Static_assert(FRAME_POINTER_REG < CSTALLMONITOR_SNAPSHOT_REGS && STACK_POINTER_REG < CSTALLMONITOR_SNAPSHOT_REGS,
               "the frame and stack pointers' DWARF numbers index a snapshot's registers");
#endif


typedef struct {
    uintptr_t start;
    uintptr_t end;
} CStallMonitorExecRange;

typedef struct CStallMonitorUnwinderBackend CStallMonitorUnwinderBackend;

struct CStallMonitorUnwinder {
    const CStallMonitorUnwinderBackend *backend;
    /// The backend's own state.
    void *state;
    pid_t pid;
    /// The snapshot being unwound (set for the duration of one walk).
    const CStallMonitorSnapshot *snapshot;
    /// Executable mappings of this process when the session opened, sorted by start.
    CStallMonitorExecRange ranges[CSM_MAX_EXEC_RANGES];
    int range_count;
    /// Collected frames of the current walk.
    uintptr_t *frames;
    int capacity;
    int count;
    int stopped_outside_code;
    /// Stack pointer of the last frame reached (0 when unknown).
    uintptr_t last_sp;
};

/// One way of walking a snapshot.
struct CStallMonitorUnwinderBackend {
    /// As samples name it.
    const char *name;
    /// Sets `session->state`; 0, or -1 with the reason in `error`.
    int (*open)(CStallMonitorUnwinder *session, char *error, size_t error_size);
    void (*close)(CStallMonitorUnwinder *session);
    /// One walk over `snapshot` into the session's frames, count, last_sp and
    /// stopped_outside_code (see CStallMonitor_unwinder_record_frame). Returns 1 when the walk
    /// reached the thread's outermost frame, 0 otherwise.
    int (*walk)(CStallMonitorUnwinder *session, pid_t tid, const CStallMonitorSnapshot *snapshot);
    /// Start of the function containing `address`; 0 when unknown.
    uintptr_t (*function_start)(CStallMonitorUnwinder *session, uintptr_t address);
};

extern const CStallMonitorUnwinderBackend CStallMonitor_libdw_backend;
#if defined(__x86_64__)
extern const CStallMonitorUnwinderBackend CStallMonitor_libunwind_backend;
#endif

/// Adds one frame of a walk: `pc` (a return address unless `activation` or the first frame).
/// Returns 1 to go on, 0 when the walk must stop (outside code: marks stopped_outside_code; or
/// the frame buffer is full).
int CStallMonitor_unwinder_record_frame(CStallMonitorUnwinder *session, uintptr_t pc, int activation, uintptr_t sp);

/// A word of the snapshot's stack: 1 read from the copy, 0 on the thread's stack but outside the
/// copy (never read live: the thread has moved on), -1 not on the thread's stack at all.
int CStallMonitor_unwinder_stack_word(const CStallMonitorSnapshot *snapshot, uintptr_t address, uint64_t *value);

/// The entry of `entries` (`count` structs of `stride` bytes, each beginning with a
/// CStallMonitorExecRange, sorted by start and not overlapping) whose range holds `address`;
/// NULL when none does.
const void *CStallMonitor_find_range(const void *entries, int count, size_t stride, uintptr_t address);

/// Reads `size` bytes at `address` of this process without faulting (an unmapped address is an
/// error, not a crash). Returns 1 on success.
int CStallMonitor_unwinder_read_own_memory(uintptr_t address, void *into, size_t size);

#endif
