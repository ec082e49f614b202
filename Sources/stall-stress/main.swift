// Replaced by the stress runner (issue 5).
print("stall-stress: not yet implemented")
