#!/usr/bin/env python3
"""Alternating rounds of criterion bench binaries; per round, each benchmark's ratio to a
baseline in the same run; medians over rounds. usage: rounds.py ROUNDS BASELINE LABEL=BIN..."""
import os, re, statistics, subprocess, sys
rounds, base = int(sys.argv[1]), sys.argv[2]
bins = [a.split("=", 1) for a in sys.argv[3:]]
unit = {"ns": 1e-3, "µs": 1.0, "us": 1.0, "ms": 1e3, "s": 1e6}
res = {label: [] for label, _ in bins}
loads = []
for r in range(rounds):
    for label, path in bins:
        loads.append(os.getloadavg()[0])
        out = subprocess.run([path, "--bench", "--warm-up-time", "1", "--measurement-time", os.environ.get("MT", "2"),
                              "--noplot"], capture_output=True, text=True).stdout
        times = {}
        for m in re.finditer(r"(\S+)\s+time:\s+\[\S+ \S+ (\S+) (\S+) \S+ \S+\]", out):
            times[m.group(1).split("/")[-1]] = float(m.group(2)) * unit[m.group(3)]
        res[label].append(times)
        print(f"round {r+1} {label}: " + ", ".join(f"{k} {v:.1f}" for k, v in times.items()), flush=True)
print(f"load average (1 min) during the runs: min {min(loads):.1f}, median {statistics.median(loads):.1f}, max {max(loads):.1f}")
def quartiles(xs):
    return statistics.quantiles(xs, n=4, method="inclusive") if len(xs) > 1 else [xs[0]] * 3
for label, runs in res.items():
    print(f"== {label}: median µs over {len(runs)} runs, per-run ratio to {base}: median (quartiles) [min-max]")
    for name in runs[0]:
        t = statistics.median(run[name] for run in runs)
        ratios = [run[name] / run[base] for run in runs]
        q1, med, q3 = quartiles(ratios)
        print(f"  {name:26} {t:8.1f} µs  {med:5.2f}x ({q1:.2f}-{q3:.2f})  [{min(ratios):.2f}-{max(ratios):.2f}]")
