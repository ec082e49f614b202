// The address range of StallMonitor's own code on monitored threads (see own_code.h).
#include "CStallMonitor.h"
#include "own_code.h"

// Defined by the linker for a section whose name is a C identifier (GNU ld, gold, lld); weak so
// that an image in which the section was dropped (no function of it kept) still links.
extern const char __start_cstallmonitor_own_code[] __attribute__((weak, visibility("hidden")));
extern const char __stop_cstallmonitor_own_code[] __attribute__((weak, visibility("hidden")));

int CStallMonitor_own_code_range(uintptr_t *start, uintptr_t *end) {
    uintptr_t first = (uintptr_t)__start_cstallmonitor_own_code;
    uintptr_t last = (uintptr_t)__stop_cstallmonitor_own_code;
    if (first == 0 || last <= first) return -1;
    *start = first;
    *end = last;
    return 0;
}
