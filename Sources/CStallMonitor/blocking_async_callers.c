// The async callers of a blocking-call record made in a Swift task, read on the calling thread
// right after the call returned (the contexts are alive only while the task runs this job).
//
// The context the job started in (the task's ResumeContext) and its parents are read first, 1 KiB
// at a time with CStallMonitor_read_memory (fails instead of faulting): a task's contexts come
// from its own slab allocator, a few dozen bytes apart, so that chain mostly lies in one or two
// such chunks; each context's Parent and ResumeParent are kept as read (the cache keeps four
// chunks, and a chunk it dropped may not be read again within the cap). The running async
// function's context is then looked for among the words the frame walk found under each saved
// frame pointer (where an async frame keeps its context), without reading any more memory: a word
// counts when it lies in a chunk already read and it, or a parent within a few hops, is a context
// of that chain. Reads are capped per record, so a record costs the calling thread one to a few
// system calls (about a microsecond each) after a call that already blocked it for at least the
// threshold; a context outside the chunks read leaves the chain of the job's start, flagged as
// such. A chain whose next context cannot be read within the cap keeps the callers read up to it,
// flagged as not reaching the task's root (a deep chain spread over many chunks, or a task whose
// header and contexts fell in five chunks, had lost every caller before).
#include "CStallMonitor.h"
#include "blocking.h"

#include <stdatomic.h>

/// The async task layout (AsyncTaskLayout): the metadata every task's first word holds (0: chains
/// are not read) and the offsets of ResumeTask and ResumeContext in a task.
static _Atomic uintptr_t task_metadata;
static atomic_int resume_task_offset;
static atomic_int resume_context_offset;

void CStallMonitor_blocking_set_async_layout(uintptr_t metadata, int task_offset, int context_offset) {
    atomic_store(&resume_task_offset, task_offset);
    atomic_store(&resume_context_offset, context_offset);
    atomic_store(&task_metadata, metadata);
}

enum { chunk_size = 1024, chunk_count = 4, reads_per_record = 6 };
enum { job_chain_limit = CSTALLMONITOR_BLOCKING_ASYNC_CALLERS, candidate_hops = 8 };

/// The chunks of the task's memory read so far for one record (a chunk that could not be read
/// counts against the cap and is not kept).
typedef struct {
    uintptr_t start[chunk_count];
    int kept;
    int reads;
    uintptr_t words[chunk_count][chunk_size / sizeof(uintptr_t)];
} chunk_cache;

/// The word at `address` (aligned): from a chunk already read, or (when `may_read` and the cap
/// allows) from its chunk, read now. 0 when it is not known.
static int word_at(chunk_cache *cache, uintptr_t address, int may_read, uintptr_t *value) {
    uintptr_t start = address & ~(uintptr_t)(chunk_size - 1);
    size_t index = (address - start) / sizeof(uintptr_t);
    for (int chunk = 0; chunk < cache->kept; chunk++)
        if (cache->start[chunk] == start) {
            *value = cache->words[chunk][index];
            return 1;
        }
    if (!may_read || cache->reads >= reads_per_record) return 0;
    cache->reads++;
    // Rounds over the slots once all are kept: the job chain's chunks are read first.
    int chunk = cache->kept < chunk_count ? cache->kept : cache->reads % chunk_count;
    if (CStallMonitor_read_memory(start, cache->words[chunk], chunk_size) != 0) return 0;
    cache->start[chunk] = start;
    if (cache->kept < chunk_count) cache->kept++;
    *value = cache->words[chunk][index];
    return 1;
}

/// Whether `address` could be a context: an aligned user-space address outside the thread's
/// stack (contexts come from the task's allocator; a frame's stale word often points into the
/// stack).
static int may_be_context(uintptr_t address, uintptr_t stack_low, uintptr_t stack_high) {
    if (address < 4096 || (address & 7) != 0 || (address >> 56) != 0) return 0;
    return address < stack_low || address >= stack_high;
}

/// A context's Parent and ResumeParent (the word after it).
static int read_pair(chunk_cache *cache, uintptr_t context, int may_read, uintptr_t pair[2]) {
    return word_at(cache, context, may_read, &pair[0]) && word_at(cache, context + sizeof(uintptr_t), may_read, &pair[1]);
}

/// The contexts of the chain the job started in, from its ResumeContext, each with its Parent and
/// ResumeParent as read (kept, so that following them again reads nothing: a chunk the cache has
/// dropped since may not be readable again within the cap).
typedef struct {
    uintptr_t context[job_chain_limit];
    uintptr_t pair[job_chain_limit][2];
    int count;
} job_chain_pairs;

/// The job chain's Parent and ResumeParent of `context`, when it is one of its contexts.
static int job_chain_pair(const job_chain_pairs *chain, uintptr_t context, uintptr_t pair[2]) {
    for (int index = 0; index < chain->count; index++)
        if (chain->context[index] == context) {
            pair[0] = chain->pair[index][0];
            pair[1] = chain->pair[index][1];
            return 1;
        }
    return 0;
}

/// Whether `candidate` is one of the job chain's contexts or leads into it within a few parents,
/// read from chunks already read.
static int joins_job_chain(chunk_cache *cache, uintptr_t candidate, const job_chain_pairs *chain) {
    uintptr_t context = candidate;
    for (int hop = 0; hop <= candidate_hops; hop++) {
        for (int index = 0; index < chain->count; index++)
            if (chain->context[index] == context) return 1;
        uintptr_t pair[2];
        if ((context & 7) != 0 || !read_pair(cache, context, 0, pair) || pair[0] == 0) return 0;
        context = pair[0];
    }
    return 0;
}

/// Appends the chain from `context` to `record`'s async callers: each context's ResumeParent, to
/// the task's root (Parent 0) or the limit; a context of the job chain is taken as it was read.
/// 0 when a context could not be read.
static int follow_contexts(chunk_cache *cache, const job_chain_pairs *chain, CStallMonitorBlockingRecord *record,
                           uintptr_t context) {
    while (record->async_caller_count < CSTALLMONITOR_BLOCKING_ASYNC_CALLERS) {
        uintptr_t pair[2];
        if (!may_be_context(context, 0, 0)) return 0;
        if (!job_chain_pair(chain, context, pair) && !read_pair(cache, context, 1, pair)) return 0;
        record->async_callers[record->async_caller_count++] = pair[1];
        if (pair[0] == 0) {
            record->async_chain_complete = 1;
            return 1;
        }
        context = pair[0];
    }
    return 1;
}

void cstallmonitor_blocking_read_async_callers(CStallMonitorBlockingRecord *record, const uintptr_t *below,
                                               uint32_t count, uintptr_t stack_low, uintptr_t stack_high) {
    record->async_caller_count = 0;
    record->async_chain_source = CStallMonitorAsyncChainNone;
    record->async_chain_complete = 0;
    uintptr_t metadata = atomic_load_explicit(&task_metadata, memory_order_relaxed);
    uintptr_t task = record->task;
    if (task == 0 || metadata == 0 || (task & 7) != 0) return;
    int task_offset = atomic_load_explicit(&resume_task_offset, memory_order_relaxed);
    int context_offset = atomic_load_explicit(&resume_context_offset, memory_order_relaxed);
    chunk_cache cache;
    cache.kept = 0;
    cache.reads = 0;
    uintptr_t first_word, resume_task, resume_context;
    if (!word_at(&cache, task, 1, &first_word) || first_word != metadata) return;
    if (!word_at(&cache, task + (uintptr_t)task_offset, 1, &resume_task) ||
        !word_at(&cache, task + (uintptr_t)context_offset, 1, &resume_context))
        return;
    job_chain_pairs chain;
    chain.count = 0;
    for (uintptr_t context = resume_context; chain.count < job_chain_limit && may_be_context(context, 0, 0);) {
        uintptr_t pair[2];
        if (!read_pair(&cache, context, 1, pair)) break;
        chain.context[chain.count] = context;
        chain.pair[chain.count][0] = pair[0];
        chain.pair[chain.count][1] = pair[1];
        chain.count++;
        if (pair[0] == 0) break;
        context = pair[0];
    }
    if (chain.count == 0) return;
    for (uint32_t index = 0; index < count; index++) {
        uintptr_t candidate = below[index];
        if (!may_be_context(candidate, stack_low, stack_high) || !joins_job_chain(&cache, candidate, &chain)) continue;
        // A chain cut where a context past the job chain could not be read keeps the callers
        // read up to it (async_chain_complete 0): the job's start would be cut at the same place.
        follow_contexts(&cache, &chain, record, candidate);
        if (record->async_caller_count > 0) {
            record->async_chain_source = CStallMonitorAsyncChainRunningFrame;
            return;
        }
        break;
    }
    record->async_caller_count = 0;
    record->async_chain_complete = 0;
    record->async_callers[record->async_caller_count++] = resume_task;
    follow_contexts(&cache, &chain, record, resume_context);
    if (record->async_caller_count > 1) {
        record->async_chain_source = CStallMonitorAsyncChainJobStart;
    } else {
        record->async_caller_count = 0;
        record->async_chain_complete = 0;
    }
}
