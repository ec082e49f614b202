// Loads elfutils' libdw once with dlopen, for the unwinder and the symbolizer.
#include "libdw.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

// Loading is retried while it fails for a reason that may pass (dlopen failing for want of a
// descriptor or memory: EMFILE, ENOMEM), at most once per call of `CStallMonitor_libdw_load`,
// which the monitor makes once per stall; a library that lacks a function is not tried again.
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

// The modules of this process are read as ELF64 (section headers through elf64_getshdr).
_Static_assert(sizeof(void *) == 8, "a 64-bit process: its modules are ELF64");
static CStallMonitorLibdw functions;
static _Atomic(const CStallMonitorLibdw *) loaded;
static bool incomplete;      // guarded by load_lock
static char why_not[256];    // guarded by load_lock
static char *debuginfo_path;

/// Marks `fd` close-on-exec (a descriptor libdw opened itself, without O_CLOEXEC).
static void set_cloexec(int fd) {
    if (fd < 0) return;
    int flags = fcntl(fd, F_GETFD);
    if (flags >= 0 && !(flags & FD_CLOEXEC)) (void)fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

typedef int (*find_debuginfo_fn)(Dwfl_Module *, void **, const char *, Dwarf_Addr, const char *, const char *,
                                 GElf_Word, char **);
static find_debuginfo_fn build_id_find_debuginfo;

// Separate debug files are looked up by build ID only (/usr/lib/debug/.build-id/xx/….debug, the
// layout of Debian's -dbgsym and Fedora's -debuginfo packages), never the way libdw's standard
// lookup ends: through debuginfod, which loads libcurl and OpenSSL into the host process and, when
// DEBUGINFOD_URLS is set, downloads files over the network in the middle of a stall.
static int find_local_debuginfo(Dwfl_Module *module, void **userdata, const char *module_name, Dwarf_Addr base,
                                const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                                char **debuginfo_file_name) {
    if (build_id_find_debuginfo == NULL) return -1;
    int fd = build_id_find_debuginfo(module, userdata, module_name, base, file_name, debuglink_file, debuglink_crc,
                                     debuginfo_file_name);
    set_cloexec(fd);  // libdw opens it without O_CLOEXEC; the session keeps it open
    return fd;
}

// MARK: - Indexed CFI for binaries whose .eh_frame precedes .eh_frame_hdr
//
// libdw takes the CFI from the section table when it has one, and pairs `.eh_frame` with the
// binary-search table of `.eh_frame_hdr` only when that section comes first. lld (Swift's linker
// on Linux) puts `.eh_frame` first: libdw then finds an address's FDE by reading and caching every
// FDE before it, 1.3 MB of heap for one lookup in a 15 MB Swift binary (16,000 FDEs). Without a
// section named `.eh_frame`, libdw reads the CFI through the PT_GNU_EH_FRAME program header, whose
// table it searches (1.8 KB). So the section is made nameless in the unwinder's private copy of the
// section header (libdw maps files MAP_PRIVATE; the file is untouched).

typedef int (*find_elf_fn)(Dwfl_Module *, void **, const char *, Dwarf_Addr, char **, Elf **);
static find_elf_fn proc_find_elf;

static struct {
    Elf *(*begin)(int, Elf_Cmd, Elf *);
    Elf_Scn *(*nextscn)(Elf *, Elf_Scn *);
    Elf64_Shdr *(*getshdr64)(Elf_Scn *);
    int (*getshdrstrndx)(Elf *, size_t *);
    char *(*strptr)(Elf *, size_t, size_t);
    int (*getphdrnum)(Elf *, size_t *);
    GElf_Phdr *(*getphdr)(Elf *, int, GElf_Phdr *);
    Elf *(*memory)(char *, size_t);
} elf_functions;
static const char *(*module_info)(Dwfl_Module *, void ***, Dwarf_Addr *, Dwarf_Addr *, Dwarf_Addr *, Dwarf_Addr *,
                                  const char **, const char **);
static Dwfl_Module *(*report_module)(Dwfl *, const char *, Dwarf_Addr, Dwarf_Addr);
static int (*proc_maps_report)(Dwfl *, FILE *);
static Elf *(*dwarf_elf)(Dwarf *);

/// The module name the vDSO is reported under (see `report_self`).
static const char vdso_module_name[] = "[vdso]";
static bool can_index_cfi;

static bool has_eh_frame_header_segment(Elf *elf) {
    size_t count = 0;
    if (elf_functions.getphdrnum(elf, &count) != 0) return false;
    for (size_t i = 0; i < count; i++) {
        GElf_Phdr header;
        if (elf_functions.getphdr(elf, (int)i, &header) != NULL && header.p_type == PT_GNU_EH_FRAME) return true;
    }
    return false;
}

/// Makes libdw use `.eh_frame_hdr`'s search table for `elf`, when `.eh_frame` comes before it in
/// the section table and the table is reachable through PT_GNU_EH_FRAME. 64-bit ELF only.
static void prefer_eh_frame_index(Elf *elf) {
    size_t names = 0;
    if (!can_index_cfi || elf == NULL || elf_functions.getshdrstrndx(elf, &names) != 0) return;
    Elf64_Shdr *eh_frame = NULL;
    for (Elf_Scn *section = elf_functions.nextscn(elf, NULL); section != NULL;
         section = elf_functions.nextscn(elf, section)) {
        Elf64_Shdr *header = elf_functions.getshdr64(section);
        if (header == NULL) return;  // not 64-bit ELF
        const char *name = elf_functions.strptr(elf, names, header->sh_name);
        if (name == NULL) continue;
        if (strcmp(name, ".eh_frame_hdr") == 0) {
            if (eh_frame == NULL || !has_eh_frame_header_segment(elf)) return;  // libdw indexes it already, or cannot
            // Written with process_vm_writev: a header in read-only memory is left alone (EFAULT),
            // never a crash. Name 0 is the empty string of every section name table.
            Elf64_Word nameless = 0;
            struct iovec local = {.iov_base = &nameless, .iov_len = sizeof(nameless)};
            struct iovec remote = {.iov_base = &eh_frame->sh_name, .iov_len = sizeof(nameless)};
            (void)process_vm_writev(getpid(), &local, 1, &remote, 1, 0);
            return;
        }
        if (strcmp(name, ".eh_frame") == 0) eh_frame = header;
    }
}

/// Opens the regular file `path` the way libdw's finder does, but close-on-exec: the session keeps
/// the descriptor, and a child the host spawns meanwhile must not inherit it. -2 when `path` is
/// not a regular file (left to libdw's finder: a deleted file is read from memory).
static int open_module_file(const char *path, char **file_name) {
    struct stat status;
    if (stat(path, &status) != 0 || !S_ISREG(status.st_mode)) return -2;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    *file_name = strdup(path);
    if (*file_name == NULL) {
        close(fd);
        return -1;
    }
    return fd;
}

static int find_elf_with_indexed_cfi(Dwfl_Module *module, void **userdata, const char *module_name, Dwarf_Addr base,
                                     char **file_name, Elf **elfp) {
    if (strcmp(module_name, vdso_module_name) == 0) {
        // The vDSO is in our own memory: its image is read there, no file is opened.
        Dwarf_Addr start = 0, end = 0;
        if (module_info == NULL || elf_functions.memory == NULL ||
            module_info(module, NULL, &start, &end, NULL, NULL, NULL, NULL) == NULL || end <= start) {
            return -1;
        }
        *elfp = elf_functions.memory((char *)(uintptr_t)start, (size_t)(end - start));
        return -1;
    }
    int fd = module_name[0] == '/' ? open_module_file(module_name, file_name) : -2;
    if (fd == -2) {
        fd = proc_find_elf(module, userdata, module_name, base, file_name, elfp);
        set_cloexec(fd);
    }
    // For a file, libdw's finder returns only its descriptor and libdw opens the ELF afterwards;
    // it is opened here instead, the way libdw would (mapped privately), to adjust it first.
    if (can_index_cfi && fd >= 0 && *elfp == NULL) *elfp = elf_functions.begin(fd, ELF_C_READ_MMAP_PRIVATE, NULL);
    prefer_eh_frame_index(*elfp);
    return fd;
}

/// Loads libdw; called with `load_lock` held while it is not loaded.
static void load(void) {
    void *library = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *error = dlerror();
        snprintf(why_not, sizeof(why_not), "libdw could not be loaded: %s", error ? error : "unknown error");
        return;  // tried again at the next stall (EMFILE, ENOMEM pass)
    }
#define CSM_LOAD(field, name)                                                 \
    *(void **)(&functions.field) = dlsym(library, name);                      \
    if (functions.field == NULL) {                                            \
        snprintf(why_not, sizeof(why_not), "libdw lacks %s", name);           \
        incomplete = true;                                                    \
        dlclose(library);                                                     \
        return;                                                               \
    }
    CSM_LOAD(begin, "dwfl_begin")
    CSM_LOAD(end, "dwfl_end")
    CSM_LOAD(report_begin, "dwfl_report_begin")
    CSM_LOAD(report_end, "dwfl_report_end")
    CSM_LOAD(linux_proc_report, "dwfl_linux_proc_report")
    CSM_LOAD(addrmodule, "dwfl_addrmodule")
    CSM_LOAD(module_addrname, "dwfl_module_addrname")
    CSM_LOAD(module_addrinfo, "dwfl_module_addrinfo")
    CSM_LOAD(module_getsrc, "dwfl_module_getsrc")
    CSM_LOAD(lineinfo, "dwfl_lineinfo")
    CSM_LOAD(module_getdwarf, "dwfl_module_getdwarf")
    CSM_LOAD(nextcu, "dwarf_nextcu")
    CSM_LOAD(offdie, "dwarf_offdie")
    CSM_LOAD(ranges, "dwarf_ranges")
    CSM_LOAD(getsrc_die, "dwarf_getsrc_die")
    CSM_LOAD(lineno, "dwarf_lineno")
    CSM_LOAD(linesrc, "dwarf_linesrc")
    CSM_LOAD(attach_state, "dwfl_attach_state")
    CSM_LOAD(getthread_frames, "dwfl_getthread_frames")
    CSM_LOAD(frame_pc, "dwfl_frame_pc")
    CSM_LOAD(state_registers, "dwfl_thread_state_registers")
    CSM_LOAD(state_register_pc, "dwfl_thread_state_register_pc")
    CSM_LOAD(dwfl_errno, "dwfl_errno")
    CSM_LOAD(dwfl_errmsg, "dwfl_errmsg")
    CSM_LOAD(callbacks.find_elf, "dwfl_linux_proc_find_elf")
#undef CSM_LOAD
    // libelf's functions, through libdw's handle (libdw depends on libelf).
    *(void **)(&elf_functions.begin) = dlsym(library, "elf_begin");
    *(void **)(&elf_functions.nextscn) = dlsym(library, "elf_nextscn");
    *(void **)(&elf_functions.getshdr64) = dlsym(library, "elf64_getshdr");
    *(void **)(&elf_functions.getshdrstrndx) = dlsym(library, "elf_getshdrstrndx");
    *(void **)(&elf_functions.strptr) = dlsym(library, "elf_strptr");
    *(void **)(&elf_functions.getphdrnum) = dlsym(library, "elf_getphdrnum");
    *(void **)(&elf_functions.getphdr) = dlsym(library, "gelf_getphdr");
    *(void **)(&elf_functions.memory) = dlsym(library, "elf_memory");
    *(void **)(&module_info) = dlsym(library, "dwfl_module_info");
    *(void **)(&report_module) = dlsym(library, "dwfl_report_module");
    *(void **)(&proc_maps_report) = dlsym(library, "dwfl_linux_proc_maps_report");
    *(void **)(&dwarf_elf) = dlsym(library, "dwarf_getelf");
    can_index_cfi = elf_functions.begin != NULL && elf_functions.nextscn != NULL && elf_functions.getshdr64 != NULL && elf_functions.getshdrstrndx != NULL &&
                    elf_functions.strptr != NULL && elf_functions.getphdrnum != NULL && elf_functions.getphdr != NULL;
    proc_find_elf = functions.callbacks.find_elf;
    functions.callbacks.find_elf = find_elf_with_indexed_cfi;
    *(void **)(&functions.frame_reg) = dlsym(library, "dwfl_frame_reg");
    *(void **)(&build_id_find_debuginfo) = dlsym(library, "dwfl_build_id_find_debuginfo");
    functions.callbacks.find_debuginfo = find_local_debuginfo;
    functions.callbacks.debuginfo_path = &debuginfo_path;
    atomic_store_explicit(&loaded, &functions, memory_order_release);
}

/// The end of the mapping that starts at `start`, from /proc/self/maps (read close-on-exec); 0
/// when not found.
static uintptr_t mapping_end(FILE *maps, uintptr_t start) {
    char line[512];
    while (fgets(line, sizeof(line), maps) != NULL) {
        unsigned long low = 0, high = 0;
        if (sscanf(line, "%lx-%lx", &low, &high) == 2 && low == start) return high;
    }
    return 0;
}

/// Reports this process's modules to `dwfl` the way `dwfl_linux_proc_report` does, but reading
/// /proc/self/maps close-on-exec (libdw's own report opens it, /proc/self/auxv and, for the vDSO,
/// /proc/self/mem without O_CLOEXEC). The vDSO is reported as a module read from memory.
static int report_self(const CStallMonitorLibdw *lib, Dwfl *dwfl) {
    if (proc_maps_report == NULL || report_module == NULL) return lib->linux_proc_report(dwfl, getpid());
    FILE *maps = fopen("/proc/self/maps", "re");
    if (maps == NULL) return errno != 0 ? errno : -1;
    int result = proc_maps_report(dwfl, maps);
    uintptr_t vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
    if (result == 0 && vdso != 0 && elf_functions.memory != NULL && module_info != NULL) {
        rewind(maps);
        uintptr_t end = mapping_end(maps, vdso);
        if (end > vdso) (void)report_module(dwfl, vdso_module_name, vdso, end);
    }
    fclose(maps);
    return result;
}

Dwfl *CStallMonitor_libdw_begin_self(char *error, size_t error_size) {
    const CStallMonitorLibdw *lib = CStallMonitor_libdw_load(error, error_size);
    if (lib == NULL) return NULL;
    Dwfl *dwfl = lib->begin(&lib->callbacks);
    if (dwfl == NULL) {
        snprintf(error, error_size, "dwfl_begin failed");
        return NULL;
    }
    lib->report_begin(dwfl);
    int reported = report_self(lib, dwfl);
    lib->report_end(dwfl, NULL, NULL);
    if (reported != 0) {
        snprintf(error, error_size, "libdw could not read this process's modules%s%s", reported > 0 ? ": " : "",
                 reported > 0 ? strerror(reported) : "");
        lib->end(dwfl);
        return NULL;
    }
    return dwfl;
}

int CStallMonitor_libdw_loadable(char *note, size_t note_size) {
    if (note != NULL && note_size > 0) note[0] = '\0';
    // Loaded already (or known not to load): the answer is known.
    void *resident = dlopen("libdw.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
    if (resident != NULL) {
        dlclose(resident);
        return 1;
    }
    void *library = dlopen("libdw.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (library == NULL) {
        const char *error = dlerror();
        if (note != NULL) snprintf(note, note_size, "libdw could not be loaded: %s", error ? error : "unknown error");
        return 0;
    }
    int complete = dlsym(library, "dwfl_getthread_frames") != NULL && dlsym(library, "dwfl_attach_state") != NULL;
    if (!complete && note != NULL) snprintf(note, note_size, "libdw lacks dwfl_getthread_frames");
    dlclose(library);  // unmapped again until a stall needs it
    return complete;
}

const CStallMonitorLibdw *CStallMonitor_libdw_load(char *error, size_t error_size) {
    const CStallMonitorLibdw *lib = atomic_load_explicit(&loaded, memory_order_acquire);
    if (lib != NULL) return lib;
    pthread_mutex_lock(&load_lock);
    lib = atomic_load_explicit(&loaded, memory_order_acquire);
    if (lib == NULL && !incomplete) {
        load();
        lib = atomic_load_explicit(&loaded, memory_order_acquire);
    }
    if (lib == NULL && error != NULL && error_size > 0) snprintf(error, error_size, "%s", why_not);
    pthread_mutex_unlock(&load_lock);
    return lib;
}

const CStallMonitorLibdw *CStallMonitor_libdw(void) {
    return atomic_load_explicit(&loaded, memory_order_acquire);
}

size_t CStallMonitor_libdw_debug_bytes(Dwarf *dwarf) {
    size_t names = 0, total = 0;
    Elf *elf = dwarf_elf != NULL && dwarf != NULL ? dwarf_elf(dwarf) : NULL;
    if (elf == NULL || elf_functions.nextscn == NULL || elf_functions.getshdr64 == NULL ||
        elf_functions.getshdrstrndx == NULL || elf_functions.strptr == NULL ||
        elf_functions.getshdrstrndx(elf, &names) != 0) {
        return 0;
    }
    for (Elf_Scn *section = elf_functions.nextscn(elf, NULL); section != NULL;
         section = elf_functions.nextscn(elf, section)) {
        Elf64_Shdr *header = elf_functions.getshdr64(section);
        if (header == NULL) return total;  // not 64-bit ELF
        const char *name = elf_functions.strptr(elf, names, header->sh_name);
        if (name != NULL && strncmp(name, ".debug_", 7) == 0 && header->sh_type != SHT_NOBITS) total += header->sh_size;
    }
    return total;
}
