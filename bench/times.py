#!/usr/bin/env python3
"""Run a command and append `label<TAB>wall<TAB>user<TAB>system` (seconds, to the microsecond)
to a file: what /usr/bin/time -f "%e %U %S" gives, without its rounding to hundredths, which
is a quarter of a millisecond per commit over a 40-commit range.

Usage: times.py LABEL FILE COMMAND [ARGS...]; COMMAND's output goes where this one's does, and
its exit status is this one's."""
import resource
import subprocess
import sys
import time

label, path, command = sys.argv[1], sys.argv[2], sys.argv[3:]
before = resource.getrusage(resource.RUSAGE_CHILDREN)
start = time.perf_counter()
status = subprocess.call(command)
wall = time.perf_counter() - start
after = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(path, "a") as out:
    out.write(f"{label}\t{wall:.6f}\t{after.ru_utime - before.ru_utime:.6f}\t"
              f"{after.ru_stime - before.ru_stime:.6f}\n")
sys.exit(status)
