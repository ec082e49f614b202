// The current mode of a CFRunLoop, as an identity, for the run-loop probe's entry callback.
//
// CFRunLoopCopyCurrentMode takes the run loop's lock and retains the mode's name: with the
// release, about 180 instructions, a third of what the probe's callbacks add to a run of the loop
// (Foundation's RunLoop.run() enters and leaves the CF loop after each source it handles). The
// loop's own thread is the only writer of the loop's current mode, so on that thread the mode can
// be read without the lock: the run loop's current-mode field, then the mode's name field.
// CoreFoundation's layout is private, so their offsets are found by an experiment, never assumed
// and never guessed from a host's loop: CStallMonitor_run_loop_mode_discover runs a loop of its
// own on a thread of its own, in two modes of its own, one nested in the other. Every pair of
// words that leads to the current mode's name at the first entry (read through
// CStallMonitor_read_memory, which fails safely on an unmapped address) is a candidate; a
// candidate stays only if it leads to the nested run's mode inside it, to the outer mode again
// after it, to the second mode in a run of its own, and to nothing while the loop does not run.
// (A heap neighbour of a field, such as the common-modes set's storage, holds a mode's name too:
// a search on a host's loop alone once settled on such a pair.) Even then the direct read is
// trusted only after it agreed with the locked call at the next entries of the host's loops, and
// only when it gives the mode the caller saw last: any other mode is read with the lock and
// compared, and a single disagreement turns the direct read off for the process. A run loop
// never removes a mode, so a name stays alive, at the same address, for the loop's whole life:
// the pointer is the mode's identity.
#include "CStallMonitor.h"
#include "own_code.h"
#include "run_loop_mode.h"

#include <stdatomic.h>
#include <stdint.h>

extern const void *CFRunLoopCopyCurrentMode(const void *run_loop);
extern void CFRelease(const void *object);

enum {
    /// Entries at which the direct read must agree with the locked call before it is used.
    agreements_needed = 8,
};

/// Where the direct read stands: unknown (the experiment has not run), checking (offsets found,
/// agreeing so far), trusted, or off (not found, or it disagreed once).
enum { direct_unknown, direct_checking, direct_trusted, direct_off };
static atomic_int direct_state = direct_unknown;
static atomic_int agreements;
/// Byte offsets of the run loop's current mode and of the mode's name (written once, before
/// `direct_state` leaves `direct_unknown`, with a release store).
static size_t mode_offset;
static size_t name_offset;

const void *CStallMonitor_run_loop_mode_locked(const void *run_loop) {
    const void *mode = CFRunLoopCopyCurrentMode(run_loop);
    if (mode != NULL) CFRelease(mode);
    return mode;
}

/// The name the current-mode field leads to, or NULL (offsets found: the fields are read plainly).
CSTALLMONITOR_OWN_CODE static inline const void *direct_mode(const void *run_loop) {
    const char *mode = *(const char *const *)((const char *)run_loop + mode_offset);
    return mode == NULL ? NULL : *(const void *const *)(mode + name_offset);
}

void CStallMonitor_run_loop_mode_offsets_found(size_t current_mode, size_t mode_name) {
    int expected = direct_unknown;
    if (current_mode == 0 || mode_name == 0) {
        atomic_compare_exchange_strong(&direct_state, &expected, direct_off);
        return;
    }
    mode_offset = current_mode;
    name_offset = mode_name;
    atomic_store(&agreements, 0);
    atomic_compare_exchange_strong_explicit(&direct_state, &expected, direct_checking, memory_order_release,
                                            memory_order_relaxed);
}

CSTALLMONITOR_OWN_CODE const void *CStallMonitor_run_loop_mode(const void *run_loop, const void *last) {
    int state = atomic_load_explicit(&direct_state, memory_order_acquire);
    const void *direct = NULL;
    if (state == direct_trusted || state == direct_checking) {
        direct = direct_mode(run_loop);
        if (state == direct_trusted && direct == last && last != NULL) return direct;
    }
    const void *name = CStallMonitor_run_loop_mode_locked(run_loop);
    if (state == direct_checking || state == direct_trusted) {
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
