// The Swift concurrency pool seen from outside its worker threads: which task a worker runs now.
//
// The Swift runtime keeps the task a thread runs in a thread-local variable of
// libswift_Concurrency (`ActiveTask::Value`, static TLS: at the same offset from every thread's
// thread pointer). glibc puts each thread it allocates a stack for at the top of that stack's
// mapping, its thread control block at a fixed distance below the mapping's end, the block's
// first and third words pointing to itself (the x86_64 TLS ABI) and the kernel thread id at a
// fixed offset in it. Both distances are learned on a thread of our own and checked on every
// thread found, and every read of another thread's memory is made with CStallMonitor_read_memory
// (own_memory.c), which fails instead of faulting on memory that is gone.
#include "CStallMonitor.h"
#include "maps.h"

#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/// Where `CStallMonitor_executable_ranges` stores the ranges it takes.
struct range_arrays {
    uintptr_t *starts;
    uintptr_t *ends;
};

/// Takes an executable mapping into the `struct range_arrays` at `context`.
static int take_executable(uintptr_t start, uintptr_t end, const char perms[8], int count, void *context) {
    if (perms[2] != 'x') return 0;
    struct range_arrays *arrays = context;
    arrays->starts[count] = start;
    arrays->ends[count] = end;
    return 1;
}

int CStallMonitor_executable_ranges(uintptr_t *starts, uintptr_t *ends, int capacity) {
    struct range_arrays arrays = {starts, ends};
    return CStallMonitor_take_mappings(capacity, take_executable, &arrays);
}

#if defined(__linux__) && defined(__x86_64__)

struct tls_query {
    const char *suffix;
    void *block;
    int found;
};

static int find_tls_block(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct tls_query *query = data;
    size_t name_length = strlen(info->dlpi_name), suffix_length = strlen(query->suffix);
    if (name_length < suffix_length || strcmp(info->dlpi_name + name_length - suffix_length, query->suffix) != 0) return 0;
    query->found = 1;
    query->block = info->dlpi_tls_data;
    return 1;
}

int CStallMonitor_tls_block_offset(const char *module_suffix, intptr_t *offset) {
    struct tls_query query = {module_suffix, NULL, 0};
    dl_iterate_phdr(find_tls_block, &query);
    if (!query.found) return -1;
    if (query.block == NULL) return -2;
    *offset = (intptr_t)query.block - (intptr_t)__builtin_thread_pointer();
    return 0;
}

uintptr_t CStallMonitor_thread_pointer(void) {
    return (uintptr_t)__builtin_thread_pointer();
}

// The x86_64 thread control block begins with three 8-byte words (tcb, dtv, self): the thread id
// is looked for from byte 24 on, and a block is recognised by its words 0 and 2.
_Static_assert(3 * sizeof(uintptr_t) == 24, "the x86_64 TCB header is three 8-byte words");

/// Whether `tp` is a thread control block: its first and third words hold its own address.
static int is_thread_control_block(uintptr_t tp) {
    uintptr_t words[3];
    if (CStallMonitor_read_memory(tp, words, sizeof words) != 0) return 0;
    return words[0] == tp && words[2] == tp;
}

int CStallMonitor_learn_thread_layout(uintptr_t *end_distance, size_t *tid_offset) {
    uintptr_t tp = (uintptr_t)__builtin_thread_pointer();
    uintptr_t low = 0, high = 0;
    if (CStallMonitor_mapping_containing(tp, &low, &high) != 0 || high <= tp) return -1;
    if (!is_thread_control_block(tp)) return -2;
    pid_t tid = CStallMonitor_gettid();
    for (size_t offset = 24; offset + sizeof(pid_t) <= 4096 && tp + offset < high; offset += sizeof(pid_t)) {
        pid_t value;
        if (CStallMonitor_read_memory(tp + offset, &value, sizeof value) == 0 && value == tid) {
            *end_distance = high - tp;
            *tid_offset = offset;
            return 0;
        }
    }
    return -3;
}

/// The thread control block near the top of the writable mapping [start, end): first at
/// `end_distance` below its end (where glibc puts it for the thread that taught us the layout),
/// else the highest 16-byte-aligned block in the top 16 KiB that points to itself (the distance
/// changes with the static TLS size and a thread's requested stack size, e.g. under a sanitizer).
/// Returns its address, or 0.
static uintptr_t thread_control_block_in(uintptr_t start, uintptr_t end, uintptr_t end_distance) {
    if (end - start > end_distance + 24 && is_thread_control_block(end - end_distance)) return end - end_distance;
    enum { window = 16384 };
    uintptr_t words[window / sizeof(uintptr_t)];
    size_t size = end - start < window ? (size_t)(end - start) : window;
    uintptr_t base = end - size;
    if (CStallMonitor_read_memory(base, words, size) != 0) return 0;
    for (size_t index = size / sizeof(uintptr_t); index >= 3; index--) {
        size_t at = index - 3;
        uintptr_t candidate = base + at * sizeof(uintptr_t);
        if (candidate % 16 != 0) continue;
        if (words[at] == candidate && words[at + 2] == candidate) return candidate;
    }
    return 0;
}

/// What `CStallMonitor_find_thread_pointers` looks for and where it stores what it finds.
struct thread_search {
    uintptr_t end_distance;
    size_t tid_offset;
    pid_t *tids;
    uintptr_t *pointers;
};

/// Takes a writable mapping that holds a thread control block into the `struct thread_search` at `context`.
static int take_thread(uintptr_t start, uintptr_t end, const char perms[8], int count, void *context) {
    struct thread_search *search = context;
    size_t tid_offset = search->tid_offset;
    if (perms[0] != 'r' || perms[1] != 'w' || end - start <= tid_offset + sizeof(pid_t)) return 0;
    uintptr_t tp = thread_control_block_in(start, end, search->end_distance);
    if (tp == 0 || tp + tid_offset + sizeof(pid_t) > end) return 0;
    pid_t tid;
    if (CStallMonitor_read_memory(tp + tid_offset, &tid, sizeof tid) != 0 || tid <= 0) return 0;
    search->tids[count] = tid;
    search->pointers[count] = tp;
    return 1;
}

int CStallMonitor_find_thread_pointers(uintptr_t end_distance, size_t tid_offset, pid_t *tids, uintptr_t *pointers, int capacity) {
    struct thread_search search = {end_distance, tid_offset, tids, pointers};
    return CStallMonitor_take_mappings(capacity, take_thread, &search);
}

#else

int CStallMonitor_tls_block_offset(const char *module_suffix, intptr_t *offset) {
    (void)module_suffix;
    (void)offset;
    return -3;
}

uintptr_t CStallMonitor_thread_pointer(void) { return 0; }

int CStallMonitor_learn_thread_layout(uintptr_t *end_distance, size_t *tid_offset) {
    (void)end_distance;
    (void)tid_offset;
    return -4;
}

int CStallMonitor_find_thread_pointers(uintptr_t end_distance, size_t tid_offset, pid_t *tids, uintptr_t *pointers, int capacity) {
    (void)end_distance;
    (void)tid_offset;
    (void)tids;
    (void)pointers;
    (void)capacity;
    return -1;
}

#endif
