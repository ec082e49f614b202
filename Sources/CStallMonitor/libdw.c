// Loads elfutils' libdw once with dlopen, for the unwinder and the symbolizer.
#include "libdw.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static CStallMonitorLibdw functions;
static const CStallMonitorLibdw *loaded;
static char why_not[256];
static char *debuginfo_path;

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
    return build_id_find_debuginfo(module, userdata, module_name, base, file_name, debuglink_file, debuglink_crc,
                                   debuginfo_file_name);
}

static void load(void) {
    void *library = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *error = dlerror();
        snprintf(why_not, sizeof(why_not), "libdw could not be loaded: %s", error ? error : "unknown error");
        return;
    }
#define CSM_LOAD(field, name)                                                 \
    *(void **)(&functions.field) = dlsym(library, name);                      \
    if (functions.field == NULL) {                                            \
        snprintf(why_not, sizeof(why_not), "libdw lacks %s", name);           \
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
    *(void **)(&functions.frame_reg) = dlsym(library, "dwfl_frame_reg");
    *(void **)(&build_id_find_debuginfo) = dlsym(library, "dwfl_build_id_find_debuginfo");
    functions.callbacks.find_debuginfo = find_local_debuginfo;
    functions.callbacks.debuginfo_path = &debuginfo_path;
    loaded = &functions;
}

Dwfl *CStallMonitor_libdw_begin_self(char *error, size_t error_size) {
    const char *note = NULL;
    const CStallMonitorLibdw *lib = CStallMonitor_libdw(&note);
    if (lib == NULL) {
        snprintf(error, error_size, "%s", note);
        return NULL;
    }
    Dwfl *dwfl = lib->begin(&lib->callbacks);
    if (dwfl == NULL) {
        snprintf(error, error_size, "dwfl_begin failed");
        return NULL;
    }
    lib->report_begin(dwfl);
    int reported = lib->linux_proc_report(dwfl, getpid());
    lib->report_end(dwfl, NULL, NULL);
    if (reported != 0) {
        snprintf(error, error_size, "libdw could not read this process's modules");
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

const CStallMonitorLibdw *CStallMonitor_libdw(const char **note) {
    pthread_once(&once, load);
    if (note != NULL) *note = loaded == NULL ? why_not : NULL;
    return loaded;
}
