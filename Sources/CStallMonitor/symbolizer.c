// Symbolication of this process's addresses with elfutils' libdw (loaded with dlopen so that the
// host does not need it to run): symbol tables including local symbols, and DWARF line tables.
// Demangling goes through the Swift runtime's own swift_demangle and the C++ ABI's __cxa_demangle.
#include "CStallMonitor.h"
#include "libdw.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

/// Modules whose DWARF size was counted (a process maps a few dozen; more are not counted).
enum { counted_modules_capacity = 256 };

struct CStallMonitorSymbolizer {
    Dwfl *dwfl;
    size_t dwarf_bytes;
    size_t counted_count;
    Dwfl_Module *counted[counted_modules_capacity];
};

/// Adds `module`'s DWARF size to the session's total the first time its line tables are read.
static void count_dwarf(CStallMonitorSymbolizer *session, Dwfl_Module *module) {
    for (size_t i = 0; i < session->counted_count; i++) {
        if (session->counted[i] == module) return;
    }
    if (session->counted_count == counted_modules_capacity) return;
    session->counted[session->counted_count++] = module;
    Dwarf_Addr bias = 0;
    session->dwarf_bytes += CStallMonitor_libdw_debug_bytes(CStallMonitor_libdw()->module_getdwarf(module, &bias));
}

size_t CStallMonitor_symbolizer_dwarf_bytes(const CStallMonitorSymbolizer *session) {
    return session != NULL ? session->dwarf_bytes : 0;
}

CStallMonitorSymbolizer *CStallMonitor_symbolizer_open(char *error, size_t error_size) {
    CStallMonitorSymbolizer *session = calloc(1, sizeof(*session));
    if (session == NULL) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    session->dwfl = CStallMonitor_libdw_begin_self(error, error_size);
    if (session->dwfl == NULL) {
        free(session);
        return NULL;
    }
    return session;
}

// Finds the line by walking the compile units' address ranges. libdw before 0.189 finds CUs only
// through .debug_aranges, which the Swift compiler (like clang) does not emit, so
// dwfl_module_getsrc finds no line for Swift code there.
static Dwfl_Line *find_line_by_cu_ranges(Dwfl_Module *module, uintptr_t address, const char **file, int *line_number) {
    const CStallMonitorLibdw *dw = CStallMonitor_libdw();
    Dwarf_Addr bias = 0;
    Dwarf *dwarf = dw->module_getdwarf(module, &bias);
    if (dwarf == NULL) return NULL;
    Dwarf_Addr target = address - bias;
    Dwarf_Off offset = 0, next = 0;
    size_t header_size = 0;
    while (dw->nextcu(dwarf, offset, &next, &header_size, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu;
        if (dw->offdie(dwarf, offset + header_size, &cu) != NULL) {
            Dwarf_Addr base = 0, start = 0, end = 0;
            ptrdiff_t cursor = 0;
            while ((cursor = dw->ranges(&cu, cursor, &base, &start, &end)) > 0) {
                if (target >= start && target < end) {
                    Dwarf_Line *line = dw->getsrc_die(&cu, target);
                    if (line == NULL) return NULL;
                    *file = dw->linesrc(line, NULL, NULL);
                    dw->lineno(line, line_number);
                    return (Dwfl_Line *)line;
                }
            }
        }
        offset = next;
    }
    return NULL;
}

/// The exported symbol whose extent holds `address` (dladdr1's symbol entry, its size checked, so
/// a static function is never named after the exported one before it), or NULL. libdw sometimes
/// names nothing in a library whose .gnu_debuglink file is absent, though its dynamic symbol
/// table holds the function.
static const char *sized_dynamic_symbol(uintptr_t address, GElf_Off *offset) {
    Dl_info info;
    const ElfW(Sym) *entry = NULL;
    if (dladdr1((void *)address, &info, (void **)&entry, RTLD_DL_SYMENT) == 0 || info.dli_sname == NULL ||
        entry == NULL || info.dli_saddr == NULL)
        return NULL;
    uintptr_t start = (uintptr_t)info.dli_saddr;
    if (address < start || address - start >= entry->st_size) return NULL;
    *offset = address - start;
    return info.dli_sname;
}

int CStallMonitor_symbolizer_lookup(CStallMonitorSymbolizer *session, uintptr_t address,
                                    CStallMonitorSymbol *symbol) {
    const CStallMonitorLibdw *dw = CStallMonitor_libdw();
    memset(symbol, 0, sizeof(*symbol));
    Dwfl_Module *module = dw->addrmodule(session->dwfl, address);
    if (module == NULL) return 0;
    GElf_Off offset = 0;
    GElf_Sym elf_symbol;
    const char *name = dw->module_addrinfo(module, address, &offset, &elf_symbol, NULL, NULL, NULL);
    if (name == NULL) name = sized_dynamic_symbol(address, &offset);
    if (name != NULL) {
        symbol->symbol = name;
        symbol->offset = offset;
    }
    Dwfl_Line *line = dw->module_getsrc(module, address);
    count_dwarf(session, module);
    if (line != NULL) {
        int line_number = 0;
        const char *file = dw->lineinfo(line, NULL, &line_number, NULL, NULL, NULL);
        if (file != NULL && line_number > 0) {
            symbol->file = file;
            symbol->line = line_number;
        }
    } else {
        const char *file = NULL;
        int line_number = 0;
        if (find_line_by_cu_ranges(module, address, &file, &line_number) != NULL && file != NULL && line_number > 0) {
            symbol->file = file;
            symbol->line = line_number;
        }
    }
    return 1;
}

void CStallMonitor_symbolizer_close(CStallMonitorSymbolizer *session) {
    const CStallMonitorLibdw *dw = CStallMonitor_libdw();
    if (session == NULL) return;
    dw->end(session->dwfl);
    free(session);
}

typedef char *(*swift_demangle_fn)(const char *, size_t, char *, size_t *, uint32_t);
typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

static struct {
    pthread_once_t once;
    swift_demangle_fn swift_demangle;
    cxa_demangle_fn cxa_demangle;
} demanglers = {.once = PTHREAD_ONCE_INIT};

static void find_demanglers(void) {
    demanglers.swift_demangle = (swift_demangle_fn)dlsym(RTLD_DEFAULT, "swift_demangle");
    demanglers.cxa_demangle = (cxa_demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
}

char *CStallMonitor_demangle(const char *name) {
    if (name == NULL) return NULL;
    pthread_once(&demanglers.once, find_demanglers);
    const char *mangled = name[0] == '_' && name[1] == '$' ? name + 1 : name;
    if (mangled[0] == '$' && (mangled[1] == 's' || mangled[1] == 'S' || mangled[1] == 'e')) {
        if (demanglers.swift_demangle == NULL) return NULL;
        return demanglers.swift_demangle(name, strlen(name), NULL, NULL, 0);
    }
    if (name[0] == '_' && name[1] == 'Z' && demanglers.cxa_demangle != NULL) {
        int status = 0;
        char *result = demanglers.cxa_demangle(name, NULL, NULL, &status);
        return status == 0 ? result : NULL;
    }
    return NULL;
}

int CStallMonitor_dladdr(uintptr_t address, const char **symbol, uintptr_t *symbol_address,
                         const char **image) {
    Dl_info info;
    if (dladdr((void *)address, &info) == 0) return 0;
    *symbol = info.dli_sname;
    *symbol_address = (uintptr_t)info.dli_saddr;
    *image = info.dli_fname;
    return info.dli_sname != NULL;
}

uintptr_t CStallMonitor_program_entry(void) {
    return (uintptr_t)getauxval(AT_ENTRY);
}
