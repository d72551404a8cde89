#!/usr/bin/env python3
"""Turn bench/run's hyperfine exports into the table of BENCHMARKS.md, with PASS/FAIL per target.

    report.py JSON_DIR LARGEST_SIZE SIZE...
"""

import json
import os
import statistics
import subprocess
import sys

json_dir, big, sizes = sys.argv[1], int(sys.argv[2]), [int(s) for s in sys.argv[3:]]
verdicts = []


def load(name):
    with open(os.path.join(json_dir, name + ".json")) as f:
        return {r["command"]: sorted(r["times"]) for r in json.load(f)["results"]}


def median(times):
    return statistics.median(times) * 1000


def quartiles(times):
    q = statistics.quantiles(times, n=4) if len(times) > 1 else [times[0]] * 3
    return q[0] * 1000, q[2] * 1000


def cell(times):
    lo, hi = quartiles(times)
    return f"{median(times):.1f} ({lo:.1f}–{hi:.1f})"


def verdict(ok, what):
    verdicts.append((ok, what))
    return "PASS" if ok else "FAIL"


def files(n):
    return f"{n // 1000}k"


print("Times in ms: median (interquartile range) of whole processes, warm cache.")
print()
print("### 1. Cache-hit Stop hook vs stock git")
print()
print("| files | state | `git prove-it hook claude` | `git status --porcelain` | ratio | temp-index `add -A` + `write-tree` | ratio | target |")
print("|---|---|---|---|---|---|---|---|")
for n in sizes:
    for kind in ("clean", "dirty"):
        r = load(f"hook-{n}-{kind}")
        hook, status, script = (r[k] for k in ("git prove-it hook claude", "git status --porcelain", "temp-index git add -A + write-tree"))
        vs_status = median(hook) / median(status)
        vs_script = median(hook) / median(script)
        targets = []
        if n == big:
            targets.append(verdict(vs_status <= 1.3, f"{files(n)} {kind}: within 1.3x of git status") + " ≤1.3× status")
            targets.append(verdict(vs_script < 1.0, f"{files(n)} {kind}: faster than the temp-index script") + " < script")
        if n == 1000:
            targets.append(verdict(median(hook) < 20, f"1k {kind}: under 20 ms") + " < 20 ms")
        print(f"| {files(n)} | {kind} | {cell(hook)} | {cell(status)} | {vs_status:.2f}× | {cell(script)} | {vs_script:.2f}× | {', '.join(targets)} |")
print()
print("dirty: 100 modified, 100 deleted and 1000 untracked files.")
print()

baseline_file = os.path.join(json_dir, "baseline")
if os.path.exists(baseline_file):
    rev = open(baseline_file).read().strip()
    print(f"### 1b. The same cache-hit hook, this build beside the baseline {rev}")
    print()
    print("Both binaries called directly (no `git` dispatch), in the same hyperfine run as section 1.")
    print()
    print("| files | state | this build | baseline | ratio | target |")
    print("|---|---|---|---|---|---|")
    for n in sizes:
        for kind in ("clean", "dirty"):
            r = load(f"hook-{n}-{kind}")
            now, before = r["this build"], r["baseline"]
            ratio = median(now) / median(before)
            # No slower than before, within the run-to-run noise of whole processes (5%).
            target = verdict(ratio <= 1.05, f"{files(n)} {kind}: no slower than the baseline") + " ≤1.05× baseline"
            print(f"| {files(n)} | {kind} | {cell(now)} | {cell(before)} | {ratio:.2f}× | {target} |")
    print()

r = load("notes")
one, many = r["hook, 1 proof"], r["hook, 100k proofs"]
added = median(many) - median(one)
print("### 2. Proof lookup among 100k notes (cache-hit hook, 1k files)")
print()
print("| 1 proof | 100k proofs | added | target |")
print("|---|---|---|---|")
print(f"| {cell(one)} | {cell(many)} | {added:+.1f} ms | {verdict(added < 5, '100k proofs add under 5 ms')} < 5 ms |")
print()

r = load("history")
base = r["git log --format=%T"]
print("### 3. Over 10k commits, every tree proven")
print()
print("| command | time | `git log --format=%T` | ratio | target |")
print("|---|---|---|---|---|")
for name in ("git prove-it check --all", "git prove-it log"):
    ratio = median(r[name]) / median(base)
    print(f"| `{name}` | {cell(r[name])} | {cell(base)} | {ratio:.2f}× | {verdict(ratio <= 2.0, name + ' within 2x of git log')} ≤2× |")
floor = r["git cat-file --batch, the same objects"]
print(f"| floor: stock `git cat-file --batch` reading the same commits, root trees and notes | {cell(floor)} | {cell(base)} | {median(floor) / median(base):.2f}× | - |")
print()
for name in ("git prove-it check --all", "git prove-it log"):
    print(f"`{name}` is at {median(r[name]) / median(floor):.2f}× of that floor.")
print()

print(f"### 4. Peak memory (RSS) at {files(big)} files")
print()
print("| state | `git-prove-it hook claude` | `git status --porcelain` | target |")
print("|---|---|---|---|")
for kind in ("clean", "dirty"):
    hook = int(open(os.path.join(json_dir, f"rss-{big}-{kind}-hook")).read().split()[-1]) / 1024
    status = int(open(os.path.join(json_dir, f"rss-{big}-{kind}-status")).read().split()[-1]) / 1024
    print(f"| {kind} | {hook:.1f} MB | {status:.1f} MB | {verdict(hook < 100, f'{kind}: peak RSS under 100 MB')} < 100 MB |")
print()

load_avg = open("/proc/loadavg").read().split()[:3]
print(f"Load average at the end of the run: {' '.join(load_avg)}; "
      f"{subprocess.run(['nproc'], capture_output=True, text=True).stdout.strip()} cores.")
print()
failed = [what for ok, what in verdicts if not ok]
print(f"**{len(verdicts) - len(failed)} of {len(verdicts)} targets met.**" + (" Missed: " + "; ".join(failed) + "." if failed else ""))
