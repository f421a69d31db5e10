#!/usr/bin/env python3
"""Paired whole-process timings of two builds of `sim`, to judge a change in
the same hour: the old build is made from a git revision in a worktree of its
own, then the two run the same command in turn (old, new, old, new, ...), and
the ratio of CPU time (user + system, the children's) of each pair is printed
with their median and range. Pairs in turn cancel the machine's slow drifts;
the median of the ratios is the figure to quote, never one run.

    python3 benches/paired.py REV [--pairs 7] [--warm 1] -- run -q --no-plots \\
        --force scenarios/outage-map.toml --out /tmp/paired

REV is the old revision (a commit, a tag, HEAD~1); the new build is the work
tree's `target/release/sim`, built first. Both write to the same --out folder
in turn; give a scratch one. The outputs of the last pair are compared byte
for byte when the command has --out, and a difference is reported (a change
meant to be invisible must leave them alike).
"""

import argparse
import filecmp
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build_old(rev):
    """The `sim` binary of revision `rev`, built in a worktree of its own."""
    commit = subprocess.run(["git", "rev-parse", "--verify", rev + "^{commit}"], cwd=ROOT,
                            check=True, capture_output=True, text=True).stdout.strip()
    base = os.path.join(tempfile.gettempdir(), "retry-storm-paired-" + commit[:12])
    tree, target = base + "-tree", base + "-target"
    binary = os.path.join(target, "release", "sim")
    if not os.path.exists(binary):
        if not os.path.exists(tree):
            subprocess.run(["git", "worktree", "add", "--detach", "-f", tree, commit], cwd=ROOT,
                           check=True)
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=tree, check=True,
                       env=dict(os.environ, CARGO_TARGET_DIR=target))
        subprocess.run(["git", "worktree", "remove", "--force", tree], cwd=ROOT, check=False)
    return binary


def cpu_seconds(binary, args):
    """CPU seconds (user + system) of one run of `binary args`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run([binary] + args, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def out_of(args):
    """The --out folder of a `sim` command, if it has one."""
    for i, a in enumerate(args):
        if a == "--out" and i + 1 < len(args):
            return args[i + 1]
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rev", help="the old revision")
    ap.add_argument("--pairs", type=int, default=7, help="pairs counted (default 7)")
    ap.add_argument("--warm", type=int, default=1, help="pairs run first, not counted")
    argv = sys.argv[1:]
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        ap.error("give sim's arguments after --")
    cut = argv.index("--")
    a = ap.parse_args(argv[:cut])
    args = argv[cut + 1:]
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    new = os.path.join(ROOT, "target", "release", "sim")
    old = build_old(a.rev)
    out = out_of(args)
    ratios, walls = [], []
    kept = tempfile.mkdtemp(prefix="paired-old-")
    for i in range(a.warm + a.pairs):
        old_cpu, old_wall = cpu_seconds(old, args)
        if out:
            # The old build's output, to compare with the new one's.
            shutil.rmtree(kept, ignore_errors=True)
            shutil.copytree(os.path.join(ROOT, out), kept)
        new_cpu, new_wall = cpu_seconds(new, args)
        if i < a.warm:
            continue
        ratios.append(new_cpu / old_cpu)
        walls.append(new_wall / old_wall)
        print(f"pair {i - a.warm + 1}: old {old_cpu:.3f} s, new {new_cpu:.3f} s CPU, "
              f"new/old {new_cpu / old_cpu:.4f}", flush=True)
    print(f"new/old CPU time: median {statistics.median(ratios):.4f} "
          f"(range {min(ratios):.4f} to {max(ratios):.4f}, {len(ratios)} pairs); "
          f"wall: median {statistics.median(walls):.4f}")
    if out:
        cmp = filecmp.dircmp(kept, os.path.join(ROOT, out))
        differ = cmp.diff_files + cmp.left_only + cmp.right_only
        print("outputs of the last pair: " + ("identical" if not differ else
                                              "DIFFER in " + ", ".join(sorted(differ))))
    shutil.rmtree(kept, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
