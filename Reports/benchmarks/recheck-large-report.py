import json, random, sys
# A report of SAMPLES samples for the large-report memory re-check (recheck-large-report-memory.md):
# every sample a distinct 20-frame stack (DISTINCT 0), or the samples repeating DISTINCT stacks.
# Run from the repository root: python3 Reports/benchmarks/recheck-large-report.py OUT SAMPLES DISTINCT
out, n, distinct = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
base = json.load(open('Tests/Fuzz/corpus/report-small.json'))
rng = random.Random(42)
nframes = 5000
frames = []
for i in range(nframes):
    frames.append({"address": "0x%x" % (0x560d219d3000 + i * 64), "file": "/src/Module%d/File%d.swift" % (i % 37, i % 211),
                   "image": 0, "inApp": i % 3 == 0, "line": 1 + i % 900, "offset": i % 97,
                   "symbol": "$s7Module%d4FuncAAyyF%d" % (i % 37, i) if i % 2 else "ModuleX.function%d(argument: Swift.Int) -> ()" % i})
base["frames"] = frames
base["images"] = base["images"][:1]
base["representativeStack"] = list(range(20))
base["sampling"]["taken"] = n; base["sampling"]["attempted"] = n; base["sampling"]["maxSamples"] = n
base["durationMs"] = n * 10.0
pool = [rng.sample(range(nframes), 20) for _ in range(distinct)] if distinct else None
samples = []
for i in range(n):
    st = pool[i % distinct] if pool else rng.sample(range(nframes), 20)
    samples.append({"frames": st, "kind": "stack", "offsetMs": round(i * 10.0 + 0.125, 3), "syscall": "futex" if i % 4 == 0 else None, "threadState": "R" if i % 4 else "S"})
    if samples[-1]["syscall"] is None: del samples[-1]["syscall"]
base["samples"] = samples
with open(out, "w") as f:
    json.dump(base, f, sort_keys=True, separators=(",", ":"))
