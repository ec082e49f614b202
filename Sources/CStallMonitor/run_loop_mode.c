// The current mode of a CFRunLoop, as an identity, for the run-loop probe's entry callback.
//
// CFRunLoopCopyCurrentMode takes the run loop's lock and retains the mode's name: with the
// release, about 180 instructions, a third of what the probe's callbacks add to a run of the loop
// (Foundation's RunLoop.run() enters and leaves the CF loop after each source it handles). The
// loop's own thread is the only writer of the loop's current mode, so on that thread the mode can
// be read without the lock: the run loop's current-mode field, then the mode's name field.
// CoreFoundation's layout is private, so their offsets are found, not assumed: at the first entry
// the run loop's words are searched (through CStallMonitor_read_memory, which fails safely on an
// unmapped address) for a pointer to an object holding the name the locked call returned. The
// direct read is trusted only after it agreed with the locked call at the next entries, and even
// then only when it gives the mode the caller saw last: any other mode is read with the lock and
// compared, and a single disagreement turns the direct read off for the process. A run loop
// never removes a mode, so a name stays alive, at the same address, for the loop's whole life:
// the pointer is the mode's identity.
#include "CStallMonitor.h"
#include "own_code.h"

#include <stdatomic.h>
#include <stdint.h>

extern const void *CFRunLoopCopyCurrentMode(const void *run_loop);
extern void CFRelease(const void *object);

enum {
    /// Words of the run loop searched for the current mode, and of a mode for its name.
    loop_words = 48,
    mode_words = 24,
    /// Entries at which the direct read must agree with the locked call before it is used.
    agreements_needed = 8,
};

/// Where the direct read stands: searching (not yet tried), checking (offsets found, agreeing so
/// far), trusted, or off (not found, or it disagreed once).
enum { direct_unknown, direct_checking, direct_trusted, direct_off };
static atomic_int direct_state = direct_unknown;
static atomic_int agreements;
/// Byte offsets of the run loop's current mode and of the mode's name (written once, before
/// `direct_state` leaves `direct_unknown`, with a release store).
static size_t mode_offset;
static size_t name_offset;

static const void *locked_mode(const void *run_loop) {
    const void *mode = CFRunLoopCopyCurrentMode(run_loop);
    if (mode != NULL) CFRelease(mode);
    return mode;
}

/// The name the current-mode field leads to, or NULL (offsets found: the fields are read plainly).
CSTALLMONITOR_OWN_CODE static inline const void *direct_mode(const void *run_loop) {
    const char *mode = *(const char *const *)((const char *)run_loop + mode_offset);
    return mode == NULL ? NULL : *(const void *const *)(mode + name_offset);
}

/// Searches the run loop for a pointer to an object whose words hold `name`.
static void find_offsets(const void *run_loop, const void *name) {
    int expected = direct_unknown;
    if (!atomic_compare_exchange_strong(&direct_state, &expected, direct_off)) return;  // another thread searches
    uintptr_t words[loop_words];
    if (name == NULL || CStallMonitor_read_memory((uintptr_t)run_loop, words, sizeof words) != 0) return;
    for (size_t i = 1; i < loop_words; i++) {
        if (words[i] == 0 || words[i] % sizeof(void *) != 0) continue;
        uintptr_t fields[mode_words];
        if (CStallMonitor_read_memory(words[i], fields, sizeof fields) != 0) continue;
        for (size_t j = 1; j < mode_words; j++) {
            if (fields[j] != (uintptr_t)name) continue;
            mode_offset = i * sizeof(void *);
            name_offset = j * sizeof(void *);
            atomic_store(&agreements, 0);
            atomic_store_explicit(&direct_state, direct_checking, memory_order_release);
            return;
        }
    }
}

CSTALLMONITOR_OWN_CODE const void *CStallMonitor_run_loop_mode(const void *run_loop, const void *last) {
    int state = atomic_load_explicit(&direct_state, memory_order_acquire);
    const void *direct = NULL;
    if (state == direct_trusted || state == direct_checking) {
        direct = direct_mode(run_loop);
        if (state == direct_trusted && direct == last && last != NULL) return direct;
    }
    const void *name = locked_mode(run_loop);
    if (state == direct_unknown) {
        find_offsets(run_loop, name);
    } else if (state == direct_checking || state == direct_trusted) {
        if (direct != name) {
            atomic_store(&direct_state, direct_off);
        } else if (state == direct_checking && atomic_fetch_add(&agreements, 1) + 1 >= agreements_needed) {
            int checking = direct_checking;
            atomic_compare_exchange_strong(&direct_state, &checking, direct_trusted);
        }
    }
    return name;
}

int CStallMonitor_run_loop_mode_read_directly(void) {
    return atomic_load(&direct_state) == direct_trusted;
}
