// Putting the blocking-call wrappers in the images' GOTs.
//
// A call from one image to a function of another goes through the caller's GOT entry for it
// (a JUMP_SLOT relocation for a PLT call, GLOB_DAT for a call without PLT or a function pointer).
// Rewriting those entries reaches the calls of every image that was loaded, the executable's
// included, whether or not the executable exports a definition (an interposing definition would
// need `--export-dynamic`, which SwiftPM gives debug builds only). Not reached: calls inside the
// C library itself (bound internally), images loaded after the install, a fully static binary.
// Each wrapper forwards to what the symbol resolved to before: the C library's function, or a
// sanitizer's interceptor of it in a sanitized build.
#include "CStallMonitor.h"
#include "blocking.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct install_state {
    int *seen;
    int *in_executable;
    int changed;
    int image_index;
};

/// Whether an image is one whose GOT is left alone: the C library (its calls are internal), the
/// dynamic linker and the vDSO.
static int skipped_image(const char *name) {
    static const char *const skipped[] = {"/libc.so", "/ld-linux", "linux-vdso", "linux-gate", "/libc-", "/libpthread.so"};
    for (size_t index = 0; index < sizeof skipped / sizeof skipped[0]; index++)
        if (strstr(name, skipped[index]) != NULL) return 1;
    return 0;
}

/// The watched call named `name`, or -1.
static int hook_named(const char *name) {
    for (int call = 0; call < CStallMonitorBlockingCallCount; call++)
        if (strcmp(cstallmonitor_blocking_hooks[call].name, name) == 0) return call;
    return -1;
}

/// Writes `value` into the GOT entry at `entry`, making its page writable for the time of the
/// write when it is in the image's read-only-after-relocation range.
static int write_entry(void **entry, void *value, uintptr_t relro_start, uintptr_t relro_end) {
    if (*entry == value) return 0;
    uintptr_t address = (uintptr_t)entry;
    if (address >= relro_start && address < relro_end) {
        uintptr_t page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
        void *page = (void *)(address & ~(page_size - 1));
        if (mprotect(page, page_size, PROT_READ | PROT_WRITE) != 0) return -1;
        *entry = value;
        mprotect(page, page_size, PROT_READ);
        return 1;
    }
    *entry = value;
    return 1;
}

/// A dynamic-section address: already relocated by the dynamic linker for most images, not for
/// some (the vDSO, read-only dynamic sections).
static uintptr_t dynamic_address(uintptr_t value, uintptr_t base) { return value < base ? value + base : value; }

static int patch_image(struct dl_phdr_info *info, size_t size, void *context) {
    (void)size;
    struct install_state *state = context;
    int is_executable = state->image_index++ == 0;
    if (!is_executable && skipped_image(info->dlpi_name)) return 0;
    uintptr_t base = info->dlpi_addr;
    const ElfW(Dyn) *dynamic = NULL;
    uintptr_t relro_start = 0, relro_end = 0, image_start = UINTPTR_MAX, image_end = 0;
    for (int index = 0; index < info->dlpi_phnum; index++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[index];
        if (header->p_type == PT_DYNAMIC) dynamic = (const ElfW(Dyn) *)(base + header->p_vaddr);
        if (header->p_type == PT_LOAD) {
            if (base + header->p_vaddr < image_start) image_start = base + header->p_vaddr;
            if (base + header->p_vaddr + header->p_memsz > image_end) image_end = base + header->p_vaddr + header->p_memsz;
        }
        if (header->p_type == PT_GNU_RELRO) {
            relro_start = base + header->p_vaddr;
            relro_end = relro_start + header->p_memsz;
        }
    }
    if (dynamic == NULL) return 0;
    const ElfW(Sym) *symbols = NULL;
    const char *strings = NULL;
    const ElfW(Rela) *tables[2] = {NULL, NULL};
    size_t sizes[2] = {0, 0};
    for (const ElfW(Dyn) *entry = dynamic; entry->d_tag != DT_NULL; entry++) {
        switch (entry->d_tag) {
        case DT_SYMTAB: symbols = (const ElfW(Sym) *)dynamic_address(entry->d_un.d_ptr, base); break;
        case DT_STRTAB: strings = (const char *)dynamic_address(entry->d_un.d_ptr, base); break;
        case DT_JMPREL: tables[0] = (const ElfW(Rela) *)dynamic_address(entry->d_un.d_ptr, base); break;
        case DT_PLTRELSZ: sizes[0] = entry->d_un.d_val; break;
        case DT_RELA: tables[1] = (const ElfW(Rela) *)dynamic_address(entry->d_un.d_ptr, base); break;
        case DT_RELASZ: sizes[1] = entry->d_un.d_val; break;
        default: break;
        }
    }
    if (symbols == NULL || strings == NULL) return 0;
    int counted[CStallMonitorBlockingCallCount] = {0};
    for (int table = 0; table < 2; table++) {
        if (tables[table] == NULL) continue;
        size_t count = sizes[table] / sizeof(ElfW(Rela));
        for (size_t index = 0; index < count; index++) {
            const ElfW(Rela) *relocation = &tables[table][index];
            unsigned long type = ELF64_R_TYPE(relocation->r_info);
            if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
            const ElfW(Sym) *symbol = &symbols[ELF64_R_SYM(relocation->r_info)];
            if (symbol->st_name == 0 || ELF64_ST_TYPE(symbol->st_info) == STT_OBJECT) continue;
            int call = hook_named(strings + symbol->st_name);
            if (call < 0) continue;
            void **entry = (void **)(base + relocation->r_offset);
            // Only an entry that leads where the name resolves for everyone (bound), or back into
            // the image's own PLT (not bound yet); one bound elsewhere (another symbol version,
            // a library's own definition) is left alone.
            uintptr_t current = (uintptr_t)*entry;
            const struct cstallmonitor_blocking_hook *hook = &cstallmonitor_blocking_hooks[call];
            if (current != (uintptr_t)*hook->forward && current != (uintptr_t)hook->wrapper
                && !(current >= image_start && current < image_end)) continue;
            int written = write_entry(entry, cstallmonitor_blocking_hooks[call].wrapper, relro_start, relro_end);
            if (written < 0) continue;
            state->changed += written;
            if (!counted[call]) {
                counted[call] = 1;
                state->seen[call]++;
                if (is_executable) state->in_executable[call] = 1;
            }
        }
    }
    return 0;
}

int CStallMonitor_blocking_install(int seen[CStallMonitorBlockingCallCount],
                                   int in_executable[CStallMonitorBlockingCallCount]) {
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
    // ThreadSanitizer's runtime owns these functions and crashed a test process with the GOTs
    // rewritten (2026-11-28, not understood yet): not supported under TSan.
    (void)seen;
    (void)in_executable;
    return -2;
#endif
#endif
    for (int call = 0; call < CStallMonitorBlockingCallCount; call++) {
        const struct cstallmonitor_blocking_hook *hook = &cstallmonitor_blocking_hooks[call];
        if (*hook->forward == NULL) {
            void *target = dlsym(RTLD_DEFAULT, hook->name);
            // A definition of the name in the executable that is one of ours would loop.
            if (target == NULL || target == hook->wrapper) return -1;
            *hook->forward = target;
        }
        seen[call] = 0;
        in_executable[call] = 0;
    }
    struct install_state state = {seen, in_executable, 0, 0};
    dl_iterate_phdr(patch_image, &state);
    return state.changed;
}
