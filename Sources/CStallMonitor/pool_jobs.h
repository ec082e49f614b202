// Shared between the pool's enqueue hook and its table of recent enqueues (not part of the shim's interface).
#ifndef CSTALLMONITOR_POOL_JOBS_H
#define CSTALLMONITOR_POOL_JOBS_H

/// Notes that `job` was enqueued on the global executor: its entry in the table of recent
/// enqueues now holds its address and a count of its enqueues, and the time beside it when it
/// was written (a coarse clock read, one load, two stores).
void CStallMonitor_pool_note_job(void *job);

#endif
