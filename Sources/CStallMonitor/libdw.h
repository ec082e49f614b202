// elfutils' libdw, loaded once with dlopen (the host does not need it to run), shared by the
// unwinder and the symbolizer. Internal to the C shim.
#ifndef CSTALLMONITOR_LIBDW_H
#define CSTALLMONITOR_LIBDW_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <sys/types.h>

/// The libdw functions the shim calls. `frame_reg` is optional (libdw 0.188+); every other
/// member is set when loading succeeded.
typedef struct {
    Dwfl *(*begin)(const Dwfl_Callbacks *);
    void (*end)(Dwfl *);
    void (*report_begin)(Dwfl *);
    int (*report_end)(Dwfl *, int (*)(Dwfl_Module *, void *, const char *, Dwarf_Addr, void *), void *);
    int (*linux_proc_report)(Dwfl *, pid_t);
    Dwfl_Module *(*addrmodule)(Dwfl *, Dwarf_Addr);
    const char *(*module_addrname)(Dwfl_Module *, GElf_Addr);
    const char *(*module_addrinfo)(Dwfl_Module *, GElf_Addr, GElf_Off *, GElf_Sym *, GElf_Word *, Elf **, Dwarf_Addr *);
    Dwfl_Line *(*module_getsrc)(Dwfl_Module *, Dwarf_Addr);
    const char *(*lineinfo)(Dwfl_Line *, Dwarf_Addr *, int *, int *, Dwarf_Word *, Dwarf_Word *);
    Dwarf *(*module_getdwarf)(Dwfl_Module *, Dwarf_Addr *);
    int (*nextcu)(Dwarf *, Dwarf_Off, Dwarf_Off *, size_t *, Dwarf_Off *, uint8_t *, uint8_t *);
    Dwarf_Die *(*offdie)(Dwarf *, Dwarf_Off, Dwarf_Die *);
    ptrdiff_t (*ranges)(Dwarf_Die *, ptrdiff_t, Dwarf_Addr *, Dwarf_Addr *, Dwarf_Addr *);
    Dwarf_Line *(*getsrc_die)(Dwarf_Die *, Dwarf_Addr);
    int (*lineno)(Dwarf_Line *, int *);
    const char *(*linesrc)(Dwarf_Line *, Dwarf_Word *, Dwarf_Word *);
    bool (*attach_state)(Dwfl *, Elf *, pid_t, const Dwfl_Thread_Callbacks *, void *);
    int (*getthread_frames)(Dwfl *, pid_t, int (*)(Dwfl_Frame *, void *), void *);
    bool (*frame_pc)(Dwfl_Frame *, Dwarf_Addr *, bool *);
    bool (*state_registers)(Dwfl_Thread *, int, unsigned, const Dwarf_Word *);
    void (*state_register_pc)(Dwfl_Thread *, Dwarf_Word);
    int (*frame_reg)(Dwfl_Frame *, unsigned, Dwarf_Word *);
    int (*dwfl_errno)(void);
    const char *(*dwfl_errmsg)(int);
    /// Callbacks for a Dwfl over this process (its ELF files found through /proc/<pid>/maps).
    Dwfl_Callbacks callbacks;
} CStallMonitorLibdw;

/// libdw's functions, loading libdw when it is not loaded yet; NULL when it is missing or lacks a
/// function, with the reason in `error` (may be NULL). A load that failed is tried again at the
/// next call (a descriptor or memory may be free by then), unless the library lacked a function.
const CStallMonitorLibdw *CStallMonitor_libdw_load(char *error, size_t error_size);

/// libdw's functions when loaded (by `CStallMonitor_libdw_load`), else NULL.
const CStallMonitorLibdw *CStallMonitor_libdw(void);

/// A Dwfl over this process with its modules reported (read from /proc/<pid>/maps); NULL with
/// the reason in `error` when libdw is missing or cannot read them. Close it with `end`.
Dwfl *CStallMonitor_libdw_begin_self(char *error, size_t error_size);

/// The bytes of `dwarf`'s `.debug_*` sections (what libdw may read and cache of it); 0 when
/// libelf cannot tell.
size_t CStallMonitor_libdw_debug_bytes(Dwarf *dwarf);

#endif
