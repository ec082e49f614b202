// Unwinding away from the sampled thread: elfutils' DWARF unwinder (libdw, loaded with dlopen)
// driven by our own register and memory callbacks over a snapshot, the registers and a copy of
// the stack bytes above the stack pointer. A snapshot comes from the sampling signal handler (a
// thread running on a CPU) or, for a thread asleep in the kernel, from its `/proc` syscall file
// and a copy of its frozen user stack made here with process_vm_readv: that thread is never
// signalled. Runs on the watchdog; never inside a signal handler.
#include "CStallMonitor.h"
#include "libdw.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/uio.h>
#include <unistd.h>

#define CSM_MAX_EXEC_RANGES 4096

typedef struct {
    uintptr_t start;
    uintptr_t end;
} exec_range;

/// What the symbol table says about one code address.
typedef struct {
    uintptr_t address;
    /// Start of its function; 0 when unknown.
    uintptr_t function_start;
    /// Whether its function is one where threads begin.
    int is_thread_entry;
} symbol_facts;

/// A small cache of symbol facts by address, replaced round robin.
typedef struct {
    symbol_facts entries[64];
    int count;
    int next;
} symbol_cache;

struct CStallMonitorUnwinder {
    Dwfl *dwfl;
    pid_t pid;
    /// The snapshot being unwound (set for the duration of one unwind).
    const CStallMonitorSnapshot *snapshot;
    /// Executable mappings of this process when the session opened, sorted by start.
    exec_range ranges[CSM_MAX_EXEC_RANGES];
    int range_count;
    /// Collected frames of the current unwind.
    uintptr_t *frames;
    int capacity;
    int count;
    int stopped_outside_code;
    /// Stack pointer of the last frame reached (0 when unknown).
    uintptr_t last_sp;
    /// Symbol lookups already made (libdw's is linear in the module's symbol table, a
    /// millisecond in a large binary; the samples of a stall ask about the same few PCs).
    symbol_cache symbols;
};

#if defined(__x86_64__)
enum { FRAME_POINTER_REG = 6, STACK_POINTER_REG = 7 };
#elif defined(__aarch64__)
enum { FRAME_POINTER_REG = 29, STACK_POINTER_REG = 31 };
#else
enum { FRAME_POINTER_REG = -1, STACK_POINTER_REG = -1 };
#endif

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

static int in_exec_range(const CStallMonitorUnwinder *session, uintptr_t address) {
    int low = 0, high = session->range_count - 1;
    while (low <= high) {
        int middle = low + (high - low) / 2;
        const exec_range *range = &session->ranges[middle];
        if (address < range->start) {
            high = middle - 1;
        } else if (address >= range->end) {
            low = middle + 1;
        } else {
            return 1;
        }
    }
    return 0;
}

int CStallMonitor_unwinder_is_code(const CStallMonitorUnwinder *session, uintptr_t address) {
    return in_exec_range(session, address);
}

// MARK: - Reading memory

/// Reads `size` bytes at `address` of this process without faulting (an unmapped address is an
/// error, not a crash). Returns 1 on success.
static int read_own_memory(uintptr_t address, void *into, size_t size) {
    struct iovec local = {.iov_base = into, .iov_len = size};
    struct iovec remote = {.iov_base = (void *)address, .iov_len = size};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)size;
}

/// Whether `size` bytes at `address` lie in the snapshot's stack copy (without overflow for any
/// address: the unwinder follows values read from the stack).
static int in_copy(const CStallMonitorSnapshot *snapshot, uintptr_t address, size_t size) {
    return address >= snapshot->sp && snapshot->stack_size >= size && address - snapshot->sp <= snapshot->stack_size - size;
}

/// A word of the snapshot: from the stack copy when it lies there; never from the live stack of
/// the sampled thread (it has moved on); other memory (globals, rarely needed by CFI) is read
/// live.
static int snapshot_word(const CStallMonitorSnapshot *snapshot, uintptr_t address, uint64_t *value) {
    if (in_copy(snapshot, address, sizeof(uint64_t))) {
        memcpy(value, snapshot->stack + (address - snapshot->sp), sizeof(uint64_t));
        return 1;
    }
    if (snapshot->stack_high != 0 && address < snapshot->stack_high &&
        (address >= snapshot->stack_low || snapshot->stack_low - address < sizeof(uint64_t))) {
        return 0;  // on the thread's stack but outside the copy
    }
    return read_own_memory(address, value, sizeof(uint64_t));
}

// MARK: - libdw callbacks

static pid_t next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp) {
    (void)dwfl;
    (void)dwfl_arg;
    (void)thread_argp;
    return 0;  // threads are asked for by id only
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *dwfl_arg, void **thread_argp) {
    (void)dwfl;
    (void)tid;
    *thread_argp = dwfl_arg;
    return true;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr address, Dwarf_Word *result, void *dwfl_arg) {
    (void)dwfl;
    CStallMonitorUnwinder *session = dwfl_arg;
    if (session->snapshot == NULL) return false;
    uint64_t value = 0;
    if (!snapshot_word(session->snapshot, (uintptr_t)address, &value)) return false;
    *result = value;
    return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg) {
    const CStallMonitorLibdw *lib = CStallMonitor_libdw(NULL);
    CStallMonitorUnwinder *session = thread_arg;
    const CStallMonitorSnapshot *snapshot = session->snapshot;
    if (snapshot == NULL) return false;
    for (int reg = 0; reg < CSTALLMONITOR_SNAPSHOT_REGS; reg++) {
        if (!(snapshot->valid & (1ull << reg))) continue;
        Dwarf_Word value = snapshot->regs[reg];
        if (!lib->state_registers(thread, reg, 1, &value)) return false;
    }
    lib->state_register_pc(thread, snapshot->pc);
    return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
    .next_thread = next_thread,
    .get_thread = get_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
};

// MARK: - Sessions

CStallMonitorUnwinder *CStallMonitor_unwinder_open(char *error, size_t error_size) {
    CStallMonitorUnwinder *session = calloc(1, sizeof(*session));
    if (session == NULL) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    session->pid = getpid();
    read_exec_ranges(session);
    session->dwfl = CStallMonitor_libdw_begin_self(error, error_size);
    if (session->dwfl == NULL) {
        free(session);
        return NULL;
    }
    const CStallMonitorLibdw *lib = CStallMonitor_libdw(NULL);
    if (!lib->attach_state(session->dwfl, NULL, session->pid, &thread_callbacks, session)) {
        int code = lib->dwfl_errno();
        snprintf(error, error_size, "dwfl_attach_state failed: %s", lib->dwfl_errmsg(code));
        lib->end(session->dwfl);
        free(session);
        return NULL;
    }
    return session;
}

void CStallMonitor_unwinder_close(CStallMonitorUnwinder *session) {
    const CStallMonitorLibdw *lib = CStallMonitor_libdw(NULL);
    if (session == NULL) return;
    lib->end(session->dwfl);
    free(session);
}

static int frame_callback(Dwfl_Frame *state, void *arg) {
    const CStallMonitorLibdw *lib = CStallMonitor_libdw(NULL);
    CStallMonitorUnwinder *session = arg;
    Dwarf_Addr pc = 0;
    bool activation = false;
    if (!lib->frame_pc(state, &pc, &activation)) return DWARF_CB_ABORT;
    if (pc == 0) return DWARF_CB_ABORT;
    // A return address is the instruction after a call: the call itself lies in code.
    uintptr_t code_address = activation || session->count == 0 ? (uintptr_t)pc : (uintptr_t)pc - 1;
    if (!in_exec_range(session, code_address)) {
        session->stopped_outside_code = 1;
        return DWARF_CB_ABORT;
    }
    if (session->count == session->capacity) return DWARF_CB_ABORT;
    session->frames[session->count++] = (uintptr_t)pc;
    Dwarf_Word sp = 0;
    session->last_sp = STACK_POINTER_REG >= 0 && lib->frame_reg != NULL &&
                               lib->frame_reg(state, (unsigned)STACK_POINTER_REG, &sp) == 0
                           ? (uintptr_t)sp
                           : 0;
    return DWARF_CB_OK;
}

/// How far past the ELF entry point a return address in `_start` may lie (glibc's x86_64
/// `_start` is 0x22 bytes, the next function starts after alignment padding at 0x30).
#define START_CODE_BYTES 0x30

/// What the symbol table says about the code at `address`: where its function starts and
/// whether threads begin there (the process's `_start`, or the C library's
/// clone/start_thread that every pthread starts in). Cached.
static const symbol_facts *lookup_symbol(CStallMonitorUnwinder *session, uintptr_t address) {
    symbol_cache *cache = &session->symbols;
    for (int i = 0; i < cache->count; i++) {
        if (cache->entries[i].address == address) return &cache->entries[i];
    }
    const CStallMonitorLibdw *lib = CStallMonitor_libdw(NULL);
    static const char *const entries[] = {"_start", "__clone3", "__clone", "clone3", "clone", "start_thread", "thread_start"};
    int slot = cache->next;
    int capacity = (int)(sizeof(cache->entries) / sizeof(cache->entries[0]));
    // The main thread's outermost frame lies in the executable's `_start`, its ELF entry point (a
    // few dozen bytes of assembly): known without the executable's symbol table, which for a big
    // Swift binary is megabytes that a complete walk then never reads.
    uintptr_t entry = (uintptr_t)getauxval(AT_ENTRY);
    if (entry != 0 && address >= entry && address - entry < START_CODE_BYTES) {
        cache->next = (slot + 1) % capacity;
        if (cache->count < capacity) cache->count++;
        cache->entries[slot].address = address;
        cache->entries[slot].function_start = entry;
        cache->entries[slot].is_thread_entry = 1;
        return &cache->entries[slot];
    }
    Dwfl_Module *module = lib->addrmodule(session->dwfl, address);
    GElf_Off offset = 0;
    GElf_Sym symbol;
    const char *name = module != NULL ? lib->module_addrinfo(module, address, &offset, &symbol, NULL, NULL, NULL) : NULL;
    cache->next = (slot + 1) % capacity;
    if (cache->count < capacity) cache->count++;
    cache->entries[slot].address = address;
    cache->entries[slot].function_start = name != NULL ? address - (uintptr_t)offset : 0;
    cache->entries[slot].is_thread_entry = 0;
    for (size_t i = 0; name != NULL && i < sizeof(entries) / sizeof(entries[0]); i++) {
        if (strcmp(name, entries[i]) == 0) cache->entries[slot].is_thread_entry = 1;
    }
    return &cache->entries[slot];
}

/// Whether `pc` lies in a function where threads begin: the process's `_start`, or the C
/// library's clone/start_thread that every pthread starts in.
static int is_thread_entry(CStallMonitorUnwinder *session, uintptr_t pc) {
    return lookup_symbol(session, pc - 1)->is_thread_entry;
}

/// One walk over the snapshot; the result in the session's frames, count and last_sp.
static int walk(CStallMonitorUnwinder *session, pid_t tid, const CStallMonitorSnapshot *snapshot) {
    const CStallMonitorLibdw *lib = CStallMonitor_libdw(NULL);
    session->snapshot = snapshot;
    session->count = 0;
    session->stopped_outside_code = 0;
    session->last_sp = 0;
    int result = lib->getthread_frames(session->dwfl, tid, frame_callback, session);
    session->snapshot = NULL;
    // libdw answers 0 both when it reached the outermost frame (whose CFI marks the return
    // address undefined) and when it could not compute a caller at all: only a walk that ends in
    // a thread's entry function is whole.
    return result == 0 && !session->stopped_outside_code && session->count > 0 &&
           session->count < session->capacity && is_thread_entry(session, session->frames[session->count - 1]);
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

/// Start of the function containing `address` (from its ELF symbol); 0 when unknown.
static uintptr_t function_start(CStallMonitorUnwinder *session, uintptr_t address) {
    return lookup_symbol(session, address)->function_start;
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
    struct iovec local = {.iov_base = snapshot->stack, .iov_len = size};
    struct iovec remote = {.iov_base = (void *)sp, .iov_len = size};
    ssize_t copied = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    if (copied <= 0) return -errno;
    snapshot->stack_size = (size_t)copied & ~(size_t)7;
    if (STACK_POINTER_REG < 0) return -ENOTSUP;
    snapshot->regs[STACK_POINTER_REG] = sp;
    snapshot->valid |= 1ull << STACK_POINTER_REG;
    return 0;
}
