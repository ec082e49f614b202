/// What one attempt at sampling a stuck thread gave, for the watch to record.
enum SampleOutcome {
    /// A stack (its physical frames in the sample's addresses): kept unless its span ended before
    /// it was complete.
    case stack(RawSample)
    /// No stack, for `reason`: counted, and a sample without a stack says `note`.
    case noStack(SkipReason, note: String)
    /// No stack and no sample: only counted (the thread ran while its stack was copied).
    case skipped(SkipReason)
    /// The thread did not answer the sampling signal in time: counted, and a sample says `note`.
    case timedOut(note: String)
    /// Not attempted: look again shortly (the thread was not yet clearly running in user space,
    /// its mask was seen blocking the signal once, or the process-wide sampler was busy).
    case lookAgain
}
