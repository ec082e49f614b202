// The snapshot unwinder's libunwind backend (x86_64): libunwind's remote API over a snapshot.
// libunwind asks us for registers (the snapshot's), memory (the stack copy; everything else read
// with pread from the file behind a read-only mapping, so no file page is mapped into this process
// and its RSS does not grow with the binaries a stack passes through) and procedure info (the
// module's `.eh_frame_hdr` search table, found from /proc/self/maps and the ELF program headers,
// never through the dynamic loader, whose lock a stalled thread may hold). Loaded with dlopen,
// RTLD_LOCAL. Runs on the watchdog; never inside a signal handler.
#include "unwinder_backend.h"

#if defined(__x86_64__)

#include <libunwind.h>

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

// MARK: - The library

static struct {
    unw_addr_space_t (*create_addr_space)(unw_accessors_t *, int);
    void (*destroy_addr_space)(unw_addr_space_t);
    int (*set_caching_policy)(unw_addr_space_t, unw_caching_policy_t);
    int (*init_remote)(unw_cursor_t *, unw_addr_space_t, void *);
    int (*step)(unw_cursor_t *);
    int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
    int (*search_unwind_table)(unw_addr_space_t, unw_word_t, unw_dyn_info_t *, unw_proc_info_t *, int, void *);
} lib;
// Loading is tried again after a failure that may pass (dlopen without a free descriptor or
// memory), at the next session open (the next stall); a library lacking a function is not.
static _Atomic int loaded;
static bool incomplete;     // guarded by load_lock
static char why_not[256];   // guarded by load_lock
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const library_name = "libunwind-x86_64.so.8";

/// Looks up every function; 1 when all are there, else 0 with the missing one in `why_not`.
static int resolve(void *library, char *note, size_t note_size) {
#define CSM_LOAD(field, name)                                          \
    *(void **)(&lib.field) = dlsym(library, name);                     \
    if (lib.field == NULL) {                                           \
        snprintf(note, note_size, "%s lacks %s", library_name, name);  \
        return 0;                                                      \
    }
    CSM_LOAD(create_addr_space, "_Ux86_64_create_addr_space")
    CSM_LOAD(destroy_addr_space, "_Ux86_64_destroy_addr_space")
    CSM_LOAD(set_caching_policy, "_Ux86_64_set_caching_policy")
    CSM_LOAD(init_remote, "_Ux86_64_init_remote")
    CSM_LOAD(step, "_Ux86_64_step")
    CSM_LOAD(get_reg, "_Ux86_64_get_reg")
    CSM_LOAD(search_unwind_table, "_Ux86_64_dwarf_search_unwind_table")
#undef CSM_LOAD
    return 1;
}

static void load(void) {
    void *library = dlopen(library_name, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *error = dlerror();
        snprintf(why_not, sizeof(why_not), "%s could not be loaded: %s", library_name, error ? error : "unknown error");
        return;
    }
    if (!resolve(library, why_not, sizeof(why_not))) {
        incomplete = true;
        dlclose(library);
        return;
    }
    atomic_store(&loaded, 1);
}

/// Loads the library unless loaded (or known incomplete); 1 when loaded, else 0 with the reason
/// in `note` (may be NULL).
static int ensure_loaded(char *note, size_t note_size) {
    if (atomic_load(&loaded)) return 1;
    pthread_mutex_lock(&load_lock);
    if (!atomic_load(&loaded) && !incomplete) load();
    int result = atomic_load(&loaded);
    if (!result && note != NULL && note_size > 0) snprintf(note, note_size, "%s", why_not);
    pthread_mutex_unlock(&load_lock);
    return result;
}

int CStallMonitor_libunwind_remote_loadable(char *note, size_t note_size) {
    if (note != NULL && note_size > 0) note[0] = '\0';
    void *resident = dlopen(library_name, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
    if (resident != NULL) {
        dlclose(resident);
        return ensure_loaded(note, note_size);
    }
    void *library = dlopen(library_name, RTLD_LAZY | RTLD_LOCAL);
    if (library == NULL) {
        const char *error = dlerror();
        if (note != NULL) snprintf(note, note_size, "%s could not be loaded: %s", library_name, error ? error : "unknown error");
        return 0;
    }
    char missing[256];
    int complete = dlsym(library, "_Ux86_64_init_remote") != NULL && dlsym(library, "_Ux86_64_dwarf_search_unwind_table") != NULL;
    if (!complete) snprintf(missing, sizeof(missing), "%s lacks its remote unwinding functions", library_name);
    if (!complete && note != NULL) snprintf(note, note_size, "%s", missing);
    dlclose(library);  // unmapped again until a stall needs it
    return complete;
}

// MARK: - The process's mappings and modules (from /proc/self/maps)

/// One file (or the vDSO) mapped into the process.
typedef struct {
    char *path;
    dev_t device;
    unsigned long inode;
    /// -1 not opened yet; -2 not readable from the file (read memory instead).
    int fd;
    /// Where the file's offset 0 is mapped; 0 when not mapped.
    uintptr_t base;
    /// The executable mappings' span.
    uintptr_t code_start;
    uintptr_t code_end;
    /// The ELF layout: 0 not read yet, 1 read, -1 not ELF (or unreadable).
    int layout_state;
    uintptr_t bias;
    /// Where PT_GNU_EH_FRAME is loaded; 0 when absent.
    uintptr_t frame_header;
    /// File ranges of the loadable segments without write permission: their bytes in memory are
    /// the file's (a writable segment's, RELRO included, were relocated).
    struct {
        uint64_t start;
        uint64_t end;
    } read_only[8];
    int read_only_count;
    /// `.eh_frame_hdr` search table: 0 not looked for yet, 1 found, -1 none usable.
    int table_state;
    uintptr_t table_segbase;
    uintptr_t table_data;
    uint32_t table_count;
} module_file;

typedef struct {
    /// First, for CStallMonitor_find_range.
    CStallMonitorExecRange range;
    uintptr_t offset;
    int file;
    int read_only;
} mapping;

_Static_assert(offsetof(mapping, range) == 0, "CStallMonitor_find_range reads each entry's range at its start");
// access_reg hands libunwind the snapshot's registers by index: its x86_64 numbers must be the
// DWARF ones the snapshot is indexed by (rax…r15 as 0–15, rbp 6, rsp 7, rip 16).
_Static_assert(UNW_X86_64_RAX == 0 && UNW_X86_64_RBP == 6 && UNW_X86_64_RSP == 7 && UNW_X86_64_R15 == 15 && UNW_X86_64_RIP == 16,
               "libunwind's x86_64 register numbers are the DWARF ones");
_Static_assert(sizeof(unw_word_t) == sizeof(uint64_t), "libunwind's words are the snapshot's 64-bit words");

/// A page of a file, read with pread: libunwind reads unwind tables a word at a time, and a
/// syscall per word made a cold stack several times slower than libdw's.
typedef struct {
    int file;
    uint64_t page;
    size_t size;
    uint8_t bytes[4096];
} file_page;

#define CSM_FILE_PAGES 8

typedef struct {
    unw_addr_space_t space;
    mapping *mappings;
    int mapping_count;
    module_file *files;
    int file_count;
    /// The file pages read last, replaced round robin (32 KiB of heap).
    file_page pages[CSM_FILE_PAGES];
    int next_page;
} libunwind_state;

static int append_mapping(libunwind_state *state, mapping entry, int *capacity) {
    if (state->mapping_count == *capacity) {
        int grown = *capacity == 0 ? 256 : *capacity * 2;
        mapping *more = realloc(state->mappings, (size_t)grown * sizeof(mapping));
        if (more == NULL) return 0;
        state->mappings = more;
        *capacity = grown;
    }
    state->mappings[state->mapping_count++] = entry;
    return 1;
}

/// The file behind a mapping: the last one when the mapping continues it, else a new entry.
static int file_for(libunwind_state *state, const char *path, dev_t device, unsigned long inode, uintptr_t offset,
                    int *capacity) {
    if (state->file_count > 0) {
        module_file *last = &state->files[state->file_count - 1];
        if (last->inode == inode && last->device == device && strcmp(last->path, path) == 0 &&
            (offset != 0 || last->base == 0)) {
            return state->file_count - 1;
        }
    }
    if (state->file_count == *capacity) {
        int grown = *capacity == 0 ? 64 : *capacity * 2;
        module_file *more = realloc(state->files, (size_t)grown * sizeof(module_file));
        if (more == NULL) return -1;
        state->files = more;
        *capacity = grown;
    }
    char *copy = strdup(path);
    if (copy == NULL) return -1;
    state->files[state->file_count] = (module_file){
        .path = copy, .device = device, .inode = inode, .fd = inode == 0 ? -2 : -1};
    return state->file_count++;
}

static int read_mappings(libunwind_state *state) {
    FILE *maps = fopen("/proc/self/maps", "re");
    if (maps == NULL) return 0;
    int mapping_capacity = 0, file_capacity = 0;
    char line[4096 + 128];
    int ok = 1;
    while (ok && fgets(line, sizeof(line), maps) != NULL) {
        unsigned long start = 0, end = 0, offset = 0, inode = 0;
        unsigned int major_number = 0, minor_number = 0;
        char permissions[8] = {0};
        int path_at = 0;
        if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %n", &start, &end, permissions, &offset, &major_number, &minor_number,
                   &inode, &path_at) < 7 || path_at == 0) {
            continue;
        }
        char *path = line + path_at;
        path[strcspn(path, "\n")] = '\0';
        int is_vdso = strcmp(path, "[vdso]") == 0;
        if (path[0] != '/' && !is_vdso) continue;
        int file = file_for(state, path, makedev(major_number, minor_number), is_vdso ? 0 : inode, offset, &file_capacity);
        if (file < 0) {
            ok = 0;
            break;
        }
        module_file *module = &state->files[file];
        if (offset == 0 && module->base == 0) module->base = (uintptr_t)start;
        if (permissions[2] == 'x') {
            if (module->code_start == 0 || start < module->code_start) module->code_start = (uintptr_t)start;
            if (end > module->code_end) module->code_end = (uintptr_t)end;
        }
        ok = append_mapping(state, (mapping){{(uintptr_t)start, (uintptr_t)end}, (uintptr_t)offset, file, permissions[1] != 'w'},
                            &mapping_capacity);
    }
    fclose(maps);
    return ok;
}

static const mapping *mapping_containing(const libunwind_state *state, uintptr_t address) {
    return CStallMonitor_find_range(state->mappings, state->mapping_count, sizeof(mapping), address);
}

/// The file's descriptor, opened on first use; -1 when it cannot be read from the file (gone,
/// replaced since it was mapped, or the process is out of descriptors).
static int file_descriptor(module_file *module) {
    if (module->fd != -1) return module->fd >= 0 ? module->fd : -1;
    module->fd = -2;
    int fd = open(module->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat status;
    if (fstat(fd, &status) != 0 || !S_ISREG(status.st_mode) || status.st_ino != module->inode ||
        status.st_dev != module->device) {
        close(fd);
        return -1;
    }
    module->fd = fd;
    return fd;
}

/// Reads the module's ELF header and program headers (from the file, else from memory at its
/// base): its load bias, PT_GNU_EH_FRAME and read-only segments. 64-bit ELF only.
static int read_layout(module_file *module) {
    if (module->layout_state != 0) return module->layout_state > 0;
    module->layout_state = -1;
    if (module->base == 0) return 0;
    int fd = file_descriptor(module);
    Elf64_Ehdr header;
    int read = fd >= 0 ? pread(fd, &header, sizeof(header), 0) == (ssize_t)sizeof(header)
                       : CStallMonitor_unwinder_read_own_memory(module->base, &header, sizeof(header));
    if (!read || memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
        header.e_phentsize != sizeof(Elf64_Phdr) || header.e_phnum == 0 || header.e_phnum > 128) {
        return 0;
    }
    Elf64_Phdr headers[128];
    size_t bytes = header.e_phnum * sizeof(Elf64_Phdr);
    read = fd >= 0 ? pread(fd, headers, bytes, (off_t)header.e_phoff) == (ssize_t)bytes
                   : CStallMonitor_unwinder_read_own_memory(module->base + header.e_phoff, headers, bytes);
    if (!read) return 0;
    int have_bias = 0;
    for (int i = 0; i < header.e_phnum; i++) {
        const Elf64_Phdr *segment = &headers[i];
        if (segment->p_type != PT_LOAD) continue;
        if (!have_bias) {
            // The first loadable segment is the one mapped at `base` (file offset 0).
            module->bias = module->base - (uintptr_t)(segment->p_vaddr - segment->p_offset);
            have_bias = 1;
        }
        if (!(segment->p_flags & PF_W) && module->read_only_count < 8) {
            module->read_only[module->read_only_count].start = segment->p_offset;
            module->read_only[module->read_only_count].end = segment->p_offset + segment->p_filesz;
            module->read_only_count++;
        }
    }
    if (!have_bias) return 0;
    for (int i = 0; i < header.e_phnum; i++) {
        if (headers[i].p_type == PT_GNU_EH_FRAME) module->frame_header = module->bias + (uintptr_t)headers[i].p_vaddr;
    }
    module->layout_state = 1;
    return 1;
}

/// Whether file bytes [offset, offset + size) lie in one of the module's read-only segments.
static int in_read_only_segment(const module_file *module, uint64_t offset, size_t size) {
    for (int i = 0; i < module->read_only_count; i++) {
        if (offset >= module->read_only[i].start && size <= module->read_only[i].end - offset &&
            offset < module->read_only[i].end) {
            return 1;
        }
    }
    return 0;
}

/// Reads `size` bytes at `offset` of file `file` (open as `fd`) through the page cache above.
static int read_file(libunwind_state *state, int file, int fd, uint64_t offset, void *into, size_t size) {
    uint64_t page = offset / sizeof(state->pages[0].bytes);
    size_t at = (size_t)(offset % sizeof(state->pages[0].bytes));
    if (at + size > sizeof(state->pages[0].bytes)) return pread(fd, into, size, (off_t)offset) == (ssize_t)size;
    file_page *cached = NULL;
    for (int i = 0; i < CSM_FILE_PAGES && cached == NULL; i++) {
        if (state->pages[i].size > 0 && state->pages[i].file == file && state->pages[i].page == page) cached = &state->pages[i];
    }
    if (cached == NULL) {
        cached = &state->pages[state->next_page];
        state->next_page = (state->next_page + 1) % CSM_FILE_PAGES;
        ssize_t got = pread(fd, cached->bytes, sizeof(cached->bytes), (off_t)(page * sizeof(cached->bytes)));
        cached->file = file;
        cached->page = page;
        cached->size = got > 0 ? (size_t)got : 0;
    }
    if (at + size > cached->size) return 0;
    memcpy(into, cached->bytes + at, size);
    return 1;
}

/// Reads `size` bytes at `address` of this process: from the file behind a mapping of a read-only
/// segment (the page cache, not this process's memory), else with process_vm_readv. Returns 1 on
/// success.
static int read_bytes(libunwind_state *state, uintptr_t address, void *into, size_t size) {
    const mapping *entry = mapping_containing(state, address);
    if (entry != NULL && entry->read_only && size <= entry->range.end - address) {
        module_file *module = &state->files[entry->file];
        uint64_t offset = entry->offset + (address - entry->range.start);
        int fd = read_layout(module) ? file_descriptor(module) : -1;
        if (fd >= 0 && in_read_only_segment(module, offset, size) && read_file(state, entry->file, fd, offset, into, size)) {
            return 1;
        }
    }
    return CStallMonitor_unwinder_read_own_memory(address, into, size);
}

// MARK: - Unwind tables

/// Size of a DW_EH_PE-encoded value with a fixed size, 0 for others.
static size_t encoded_size(uint8_t encoding) {
    switch (encoding & 0x0f) {
    case 0x02: case 0x0a: return 2;  // udata2, sdata2
    case 0x03: case 0x0b: return 4;  // udata4, sdata4
    case 0x04: case 0x0c: return 8;  // udata8, sdata8
    default: return 0;
    }
}

/// Finds the module's `.eh_frame_hdr` search table through its program headers (PT_GNU_EH_FRAME).
static int find_table(libunwind_state *state, module_file *module) {
    if (module->table_state != 0) return module->table_state > 0;
    module->table_state = -1;
    if (!read_layout(module)) return 0;
    uintptr_t frame_header = module->frame_header;
    uint8_t fields[4];
    if (frame_header == 0 || !read_bytes(state, frame_header, fields, sizeof(fields))) return 0;
    // version 1; eh_frame_ptr of any fixed size; a 4-byte count; a table of (sdata4, sdata4)
    // relative to the header: the layout libunwind's table search reads.
    size_t pointer_size = encoded_size(fields[1]);
    if (fields[0] != 1 || pointer_size == 0 || encoded_size(fields[2]) != 4 || fields[3] != 0x3b) return 0;
    uint32_t count = 0;
    if (!read_bytes(state, frame_header + 4 + pointer_size, &count, sizeof(count)) || count == 0) return 0;
    module->table_segbase = frame_header;
    module->table_data = frame_header + 4 + pointer_size + 4;
    module->table_count = count;
    module->table_state = 1;
    return 1;
}

static CStallMonitorUnwinder *session_of(void *arg) {
    return arg;
}

static int find_proc_info(unw_addr_space_t space, unw_word_t ip, unw_proc_info_t *info, int need_unwind_info, void *arg) {
    CStallMonitorUnwinder *session = session_of(arg);
    libunwind_state *state = session->state;
    const mapping *entry = mapping_containing(state, (uintptr_t)ip);
    if (entry == NULL) return -UNW_ENOINFO;
    module_file *module = &state->files[entry->file];
    if (!find_table(state, module)) return -UNW_ENOINFO;
    unw_dyn_info_t table;
    memset(&table, 0, sizeof(table));
    table.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    table.start_ip = module->code_start;
    table.end_ip = module->code_end;
    table.u.rti.segbase = module->table_segbase;
    table.u.rti.table_data = module->table_data;
    // In words: each entry is two 4-byte offsets.
    table.u.rti.table_len = (unw_word_t)module->table_count * 8 / sizeof(unw_word_t);
    return lib.search_unwind_table(space, ip, &table, info, need_unwind_info, arg);
}

static void put_unwind_info(unw_addr_space_t space, unw_proc_info_t *info, void *arg) {
    // Only called for dynamic unwind info, which this address space never returns.
    (void)space;
    (void)info;
    (void)arg;
}

static int get_dyn_info_list_addr(unw_addr_space_t space, unw_word_t *address, void *arg) {
    (void)space;
    (void)address;
    (void)arg;
    return -UNW_ENOINFO;
}

static int access_mem(unw_addr_space_t space, unw_word_t address, unw_word_t *value, int write, void *arg) {
    (void)space;
    CStallMonitorUnwinder *session = session_of(arg);
    if (write) return -UNW_EINVAL;
    uint64_t word = 0;
    int on_stack = session->snapshot != NULL ? CStallMonitor_unwinder_stack_word(session->snapshot, (uintptr_t)address, &word) : -1;
    if (on_stack == 0) return -UNW_EINVAL;
    if (on_stack < 0 && !read_bytes(session->state, (uintptr_t)address, &word, sizeof(word))) return -UNW_EINVAL;
    *value = (unw_word_t)word;
    return 0;
}

static int access_reg(unw_addr_space_t space, unw_regnum_t reg, unw_word_t *value, int write, void *arg) {
    (void)space;
    CStallMonitorUnwinder *session = session_of(arg);
    const CStallMonitorSnapshot *snapshot = session->snapshot;
    if (write) return -UNW_EREADONLYREG;
    if (snapshot == NULL) return -UNW_EBADREG;
    // libunwind's x86_64 register numbers are the DWARF ones, rip as 16.
    if (reg == UNW_X86_64_RIP) {
        *value = snapshot->pc;
        return 0;
    }
    if (reg == UNW_X86_64_RSP && !(snapshot->valid & (1ull << UNW_X86_64_RSP))) {
        *value = snapshot->sp;
        return 0;
    }
    if (reg < 0 || reg >= 16 || !(snapshot->valid & (1ull << reg))) return -UNW_EBADREG;
    *value = snapshot->regs[reg];
    return 0;
}

static int access_fpreg(unw_addr_space_t space, unw_regnum_t reg, unw_fpreg_t *value, int write, void *arg) {
    (void)space;
    (void)reg;
    (void)value;
    (void)write;
    (void)arg;
    return -UNW_EBADREG;
}

static int resume(unw_addr_space_t space, unw_cursor_t *cursor, void *arg) {
    (void)space;
    (void)cursor;
    (void)arg;
    return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t space, unw_word_t address, char *buffer, size_t size, unw_word_t *offset,
                         void *arg) {
    (void)space;
    (void)address;
    (void)buffer;
    (void)size;
    (void)offset;
    (void)arg;
    return -UNW_ENOINFO;
}

/// The accessors, in room for the members later libunwind versions add (left NULL: optional).
static union {
    unw_accessors_t accessors;
    char room[512];
} callbacks = {.accessors = {
                   .find_proc_info = find_proc_info,
                   .put_unwind_info = put_unwind_info,
                   .get_dyn_info_list_addr = get_dyn_info_list_addr,
                   .access_mem = access_mem,
                   .access_reg = access_reg,
                   .access_fpreg = access_fpreg,
                   .resume = resume,
                   .get_proc_name = get_proc_name,
               }};

// MARK: - Session

static void free_state(libunwind_state *state) {
    if (state == NULL) return;
    if (state->space != NULL) lib.destroy_addr_space(state->space);
    for (int i = 0; i < state->file_count; i++) {
        if (state->files[i].fd >= 0) close(state->files[i].fd);
        free(state->files[i].path);
    }
    free(state->files);
    free(state->mappings);
    free(state);
}

static int open_libunwind(CStallMonitorUnwinder *session, char *error, size_t error_size) {
    if (!ensure_loaded(error, error_size)) return -1;
    libunwind_state *state = calloc(1, sizeof(*state));
    if (state == NULL) {
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    if (!read_mappings(state)) {
        snprintf(error, error_size, "this process's mappings could not be read");
        free_state(state);
        return -1;
    }
    state->space = lib.create_addr_space(&callbacks.accessors, 0);
    if (state->space == NULL) {
        snprintf(error, error_size, "libunwind could not create an address space");
        free_state(state);
        return -1;
    }
    // One cache for the session, used from one thread at a time.
    (void)lib.set_caching_policy(state->space, UNW_CACHE_GLOBAL);
    session->state = state;
    return 0;
}

static void close_libunwind(CStallMonitorUnwinder *session) {
    free_state(session->state);
    session->state = NULL;
}

static uintptr_t function_start_libunwind(CStallMonitorUnwinder *session, uintptr_t address) {
    libunwind_state *state = session->state;
    unw_proc_info_t info;
    memset(&info, 0, sizeof(info));
    if (find_proc_info(state->space, address, &info, 0, session) != 0) return 0;
    return address >= info.start_ip && address < info.end_ip ? (uintptr_t)info.start_ip : 0;
}

static int walk_libunwind(CStallMonitorUnwinder *session, pid_t tid, const CStallMonitorSnapshot *snapshot) {
    (void)tid;
    (void)snapshot;
    libunwind_state *state = session->state;
    unw_cursor_t cursor;
    if (lib.init_remote(&cursor, state->space, session) < 0) return 0;
    int stepped = 0;
    for (;;) {
        unw_word_t ip = 0, sp = 0;
        if (lib.get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0) return 0;
        if (lib.get_reg(&cursor, UNW_REG_SP, &sp) < 0) sp = 0;
        if (!CStallMonitor_unwinder_record_frame(session, (uintptr_t)ip, 0, (uintptr_t)sp)) return 0;
        stepped = lib.step(&cursor);
        if (stepped <= 0) break;
    }
    if (stepped < 0 || session->count >= session->capacity) return 0;
    // A step answers 0 at the outermost frame, whose CFI marks the return address undefined
    // (the C library's clone3/clone, the executable's `_start`), and also when it found no CFI and
    // no frame pointer to follow: only the first kind has CFI for its last frame.
    uintptr_t last = session->frames[session->count - 1];
    return function_start_libunwind(session, session->count > 1 ? last - 1 : last) != 0;
}

const CStallMonitorUnwinderBackend CStallMonitor_libunwind_backend = {
    .name = "libunwind-remote",
    .open = open_libunwind,
    .close = close_libunwind,
    .walk = walk_libunwind,
    .function_start = function_start_libunwind,
};

#else

#include <stdio.h>

int CStallMonitor_libunwind_remote_loadable(char *note, size_t note_size) {
    if (note != NULL) snprintf(note, note_size, "libunwind's remote unwinder is used on x86_64 only");
    return 0;
}

#endif
