// The experiment that finds where a CFRunLoop keeps its current mode (see run_loop_mode.c).
//
// A thread of our own runs a run loop of its own in two modes of its own ("A" and "B", each kept
// non-empty by a timer that never fires), with an entry observer in both. At the first entry (a
// run in A) every pair (a word of the loop that points somewhere, a word there) that holds A's
// name is a candidate. From inside that entry's callout the loop runs in B (nested): a candidate
// must lead to B's name then, and to A's again once the nested run returned. A second top-level
// run in B must lead to B; between runs, with no run in progress, the loop's current-mode field
// is empty and a candidate must lead to nothing. The pair left is the one the direct read uses;
// none or several leave the direct read off.
#include "CStallMonitor.h"
#include "run_loop_mode.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    long version;
    void *info;
    const void *(*retain)(const void *);
    void (*release)(const void *);
    const void *(*copy_description)(const void *);
} cf_context;

extern const void *CFRunLoopGetCurrent(void);
extern const void *CFStringCreateWithCString(const void *allocator, const char *string, uint32_t encoding);
extern const void *CFRunLoopObserverCreate(const void *allocator, unsigned long activities, unsigned char repeats,
                                           long order, void (*callout)(const void *, unsigned long, void *),
                                           cf_context *context);
extern void CFRunLoopAddObserver(const void *run_loop, const void *observer, const void *mode);
extern void CFRunLoopObserverInvalidate(const void *observer);
extern const void *CFRunLoopTimerCreate(const void *allocator, double fire_date, double interval,
                                        unsigned long flags, long order, void (*callout)(const void *, void *),
                                        cf_context *context);
extern void CFRunLoopAddTimer(const void *run_loop, const void *timer, const void *mode);
extern void CFRunLoopTimerInvalidate(const void *timer);
extern double CFAbsoluteTimeGetCurrent(void);
extern int32_t CFRunLoopRunInMode(const void *mode, double seconds, unsigned char return_after_source_handled);
extern void CFRelease(const void *object);

enum {
    /// Words of the run loop searched for the current mode, and of a mode for its name.
    loop_words = 48,
    mode_words = 24,
    max_candidates = 32,
    /// kCFStringEncodingUTF8 and kCFRunLoopEntry.
    utf8_encoding = 0x08000100,
    entry_activity = 1,
};

typedef struct {
    const void *run_loop;
    const void *second_mode;
    size_t loop_offsets[max_candidates];
    size_t name_offsets[max_candidates];
    int candidates;
    int entries;
} experiment;

/// Every pair of offsets that leads from the loop to `name`.
static void search(experiment *run, const void *name) {
    uintptr_t words[loop_words];
    if (name == NULL || CStallMonitor_read_memory((uintptr_t)run->run_loop, words, sizeof words) != 0) return;
    for (size_t i = 1; i < loop_words; i++) {
        if (words[i] == 0 || words[i] % sizeof(void *) != 0) continue;
        uintptr_t fields[mode_words];
        if (CStallMonitor_read_memory(words[i], fields, sizeof fields) != 0) continue;
        for (size_t j = 1; j < mode_words && run->candidates < max_candidates; j++) {
            if (fields[j] != (uintptr_t)name) continue;
            run->loop_offsets[run->candidates] = i * sizeof(void *);
            run->name_offsets[run->candidates] = j * sizeof(void *);
            run->candidates++;
        }
    }
}

/// Whether the pair leads to `name` now; to nothing (an empty current-mode field) when NULL.
static int leads_to(const experiment *run, int candidate, const void *name) {
    uintptr_t mode;
    if (CStallMonitor_read_memory((uintptr_t)run->run_loop + run->loop_offsets[candidate], &mode, sizeof mode) != 0)
        return 0;
    if (name == NULL) return mode == 0;
    uintptr_t field;
    if (mode == 0 || CStallMonitor_read_memory(mode + run->name_offsets[candidate], &field, sizeof field) != 0)
        return 0;
    return field == (uintptr_t)name;
}

/// Keeps the candidates that lead to `name` now.
static void keep_leading_to(experiment *run, const void *name) {
    int kept = 0;
    for (int k = 0; k < run->candidates; k++) {
        if (!leads_to(run, k, name)) continue;
        run->loop_offsets[kept] = run->loop_offsets[k];
        run->name_offsets[kept] = run->name_offsets[k];
        kept++;
    }
    run->candidates = kept;
}

static void entered(const void *observer, unsigned long activity, void *info) {
    (void)observer;
    (void)activity;
    experiment *run = info;
    const void *name = CStallMonitor_run_loop_mode_locked(run->run_loop);
    if (run->entries++ > 0) {
        keep_leading_to(run, name);
        return;
    }
    search(run, name);
    CFRunLoopRunInMode(run->second_mode, 0, 1);
    keep_leading_to(run, name);
}

static void never_fires(const void *timer, void *info) {
    (void)timer;
    (void)info;
}

static void *run_experiment(void *unused) {
    (void)unused;
    experiment run;
    memset(&run, 0, sizeof run);
    run.run_loop = CFRunLoopGetCurrent();
    const void *first = CFStringCreateWithCString(NULL, "CStallMonitorModeDiscoveryA", utf8_encoding);
    const void *second = CFStringCreateWithCString(NULL, "CStallMonitorModeDiscoveryB", utf8_encoding);
    if (first == NULL || second == NULL) {
        if (first != NULL) CFRelease(first);
        if (second != NULL) CFRelease(second);
        CStallMonitor_run_loop_mode_offsets_found(0, 0);
        return NULL;
    }
    run.second_mode = second;
    cf_context context = {.info = &run};
    // One observer per mode: CoreFoundation skips an observer whose callout is running, so the
    // nested run's entry is seen by the second.
    const void *observer = CFRunLoopObserverCreate(NULL, entry_activity, 1, 0, entered, &context);
    const void *nested_observer = CFRunLoopObserverCreate(NULL, entry_activity, 1, 0, entered, &context);
    cf_context no_context = {0};
    const void *timer = CFRunLoopTimerCreate(NULL, CFAbsoluteTimeGetCurrent() + 1e9, 0, 0, 0, never_fires, &no_context);
    CFRunLoopAddObserver(run.run_loop, observer, first);
    CFRunLoopAddObserver(run.run_loop, nested_observer, second);
    CFRunLoopAddTimer(run.run_loop, timer, first);
    CFRunLoopAddTimer(run.run_loop, timer, second);

    CFRunLoopRunInMode(first, 0, 1);
    keep_leading_to(&run, NULL);
    CFRunLoopRunInMode(second, 0, 1);
    keep_leading_to(&run, NULL);
    // A, B nested in A, then B: three entries seen, exactly one pair left.
    int found = run.entries == 3 && run.candidates == 1;
    CStallMonitor_run_loop_mode_offsets_found(found ? run.loop_offsets[0] : 0, found ? run.name_offsets[0] : 0);

    CFRunLoopTimerInvalidate(timer);
    CFRunLoopObserverInvalidate(observer);
    CFRunLoopObserverInvalidate(nested_observer);
    CFRelease(timer);
    CFRelease(observer);
    CFRelease(nested_observer);
    CFRelease(first);
    CFRelease(second);
    return NULL;
}

static void discover(void) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, run_experiment, NULL) != 0) {
        CStallMonitor_run_loop_mode_offsets_found(0, 0);
        return;
    }
    CStallMonitor_blocking_allow(1);  // the monitor's own wait, on whatever thread starts it
    pthread_join(thread, NULL);
    CStallMonitor_blocking_allow(0);
}

void CStallMonitor_run_loop_mode_discover(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, discover);
}
