/// Whether a report's duration fits work the test timed inside the stalled span: never shorter
/// (the span contains the timed work; 0.1 ms for rounding) and at most `slackMs` longer (handing
/// the closure to the loop and returning from it, a preemption on a loaded machine).
func durationCovers(_ reportMs: Double, measured: Double, slackMs: Double = 50) -> Bool {
    reportMs >= measured - 0.1 && reportMs <= measured + slackMs
}
