// Replaced by the benchmark runner (issue 6).
print("stall-bench: not yet implemented")
