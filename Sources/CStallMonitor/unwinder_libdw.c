// The snapshot unwinder's libdw backend: elfutils' DWARF unwinder (libdw, loaded with dlopen)
// driven by our register and memory callbacks over a snapshot. Thread entries are recognised by
// their symbols. Runs on the watchdog; never inside a signal handler.
#include "libdw.h"
#include "unwinder_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

/// What the symbol table says about one code address.
typedef struct {
    uintptr_t address;
    /// Start of its function; 0 when unknown.
    uintptr_t function_start;
    /// Whether its function is one where threads begin.
    int is_thread_entry;
} symbol_facts;

/// The libdw session and a small cache of symbol facts by address, replaced round robin (libdw's
/// symbol lookup is linear in the module's symbol table, a millisecond in a large binary; the
/// samples of a stall ask about the same few PCs).
typedef struct {
    Dwfl *dwfl;
    symbol_facts entries[64];
    int count;
    int next;
} libdw_state;

// libdw is handed the snapshot's registers and stack words as they are.
_Static_assert(sizeof(Dwarf_Word) == sizeof(uint64_t), "libdw's registers and memory words are the snapshot's 64-bit words");

static libdw_state *state_of(CStallMonitorUnwinder *session) {
    return session->state;
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
    int on_stack = CStallMonitor_unwinder_stack_word(session->snapshot, (uintptr_t)address, &value);
    // Other memory (globals, rarely needed by CFI) is read live.
    if (on_stack == 0 || (on_stack < 0 && !CStallMonitor_unwinder_read_own_memory((uintptr_t)address, &value, sizeof(value)))) {
        return false;
    }
    *result = value;
    return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg) {
    const CStallMonitorLibdw *lib = CStallMonitor_libdw();
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

// MARK: - Session

static int open_libdw(CStallMonitorUnwinder *session, char *error, size_t error_size) {
    libdw_state *state = calloc(1, sizeof(*state));
    if (state == NULL) {
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    state->dwfl = CStallMonitor_libdw_begin_self(error, error_size);
    if (state->dwfl == NULL) {
        free(state);
        return -1;
    }
    const CStallMonitorLibdw *lib = CStallMonitor_libdw();
    if (!lib->attach_state(state->dwfl, NULL, session->pid, &thread_callbacks, session)) {
        int code = lib->dwfl_errno();
        snprintf(error, error_size, "dwfl_attach_state failed: %s", lib->dwfl_errmsg(code));
        lib->end(state->dwfl);
        free(state);
        return -1;
    }
    session->state = state;
    return 0;
}

static void close_libdw(CStallMonitorUnwinder *session) {
    libdw_state *state = state_of(session);
    if (state == NULL) return;
    CStallMonitor_libdw()->end(state->dwfl);
    free(state);
    session->state = NULL;
}

// MARK: - Symbols

/// How far past the ELF entry point a return address in `_start` may lie (glibc's x86_64
/// `_start` is 0x22 bytes, the next function starts after alignment padding at 0x30).
#define START_CODE_BYTES 0x30

/// What the symbol table says about the code at `address`: where its function starts and
/// whether threads begin there (the process's `_start`, or the C library's
/// clone/start_thread that every pthread starts in). Cached.
static const symbol_facts *lookup_symbol(CStallMonitorUnwinder *session, uintptr_t address) {
    libdw_state *cache = state_of(session);
    for (int i = 0; i < cache->count; i++) {
        if (cache->entries[i].address == address) return &cache->entries[i];
    }
    const CStallMonitorLibdw *lib = CStallMonitor_libdw();
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
    Dwfl_Module *module = lib->addrmodule(cache->dwfl, address);
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

static uintptr_t function_start_libdw(CStallMonitorUnwinder *session, uintptr_t address) {
    return lookup_symbol(session, address)->function_start;
}

// MARK: - Walk

static int frame_callback(Dwfl_Frame *frame, void *arg) {
    const CStallMonitorLibdw *lib = CStallMonitor_libdw();
    CStallMonitorUnwinder *session = arg;
    Dwarf_Addr pc = 0;
    bool activation = false;
    if (!lib->frame_pc(frame, &pc, &activation)) return DWARF_CB_ABORT;
    if (pc == 0) return DWARF_CB_ABORT;
    Dwarf_Word sp = 0;
    uintptr_t known_sp = STACK_POINTER_REG >= 0 && lib->frame_reg != NULL &&
                                 lib->frame_reg(frame, (unsigned)STACK_POINTER_REG, &sp) == 0
                             ? (uintptr_t)sp
                             : 0;
    return CStallMonitor_unwinder_record_frame(session, (uintptr_t)pc, activation, known_sp) ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static int walk_libdw(CStallMonitorUnwinder *session, pid_t tid, const CStallMonitorSnapshot *snapshot) {
    (void)snapshot;
    int result = CStallMonitor_libdw()->getthread_frames(state_of(session)->dwfl, tid, frame_callback, session);
    // libdw answers 0 both when it reached the outermost frame (whose CFI marks the return
    // address undefined) and when it could not compute a caller at all: only a walk that ends in
    // a thread's entry function is whole.
    return result == 0 && !session->stopped_outside_code && session->count > 0 &&
           session->count < session->capacity && lookup_symbol(session, session->frames[session->count - 1] - 1)->is_thread_entry;
}

const CStallMonitorUnwinderBackend CStallMonitor_libdw_backend = {
    .name = "libdw",
    .open = open_libdw,
    .close = close_libdw,
    .walk = walk_libdw,
    .function_start = function_start_libdw,
};
