#!/usr/bin/env python3
"""Does the starting article's claim hold in a world? Runs a scenario for
seeds 1 to N (20 by default) with some of its keys changed, and counts the
seeds for which all three parts hold (docs/src/outage.md, "Where the article's
claim holds"):

1. `none` crashes the server again after the trigger, or recovers at least
   3 times later than `full-jitter`;
2. `exponential`'s peak of attempts per second after the trigger is above
   `full-jitter`'s, and it recovers later (never counts as later);
3. `full-jitter` recovers.

Usage (from the repository, after `cargo build --release`):

    python3 examples/article_claim.py scenarios/outage.toml \
        server.restart='"500ms"' server.cold_start=1.0 --seeds 20

A change is `table.key=value`, the value written as in TOML; the key must be
in the file already, or its table must be. The scenario needs strategies named
none, exponential and full-jitter and one trigger. Prints the count and, per
strategy, the least, median and most of crashes, recovery time (inf: never),
peak attempts per second after the trigger and failed requests.
"""
import csv
import os
import re
import statistics
import subprocess
import sys
import tempfile

SIM = os.environ.get("SIM", "target/release/sim")


def changed(text, changes):
    for kv in changes:
        key, value = kv.split("=", 1)
        table, name = key.rsplit(".", 1) if "." in key else ("", key)
        lines, current, done = text.split("\n"), "", False
        for i, line in enumerate(lines):
            m = re.match(r"^\[+([^\]]+)\]+", line)
            if m:
                current = m.group(1)
            if current == table and re.match(rf"^{re.escape(name)}\s*=", line):
                lines[i], done = f"{name} = {value}", True
                break
        if not done:
            for i, line in enumerate(lines):
                if line.strip() == f"[{table}]":
                    lines.insert(i + 1, f"{name} = {value}")
                    done = True
                    break
        if not done:
            sys.exit(f"{kv}: no key {name} and no table [{table}] in the file")
        text = "\n".join(lines)
    return text


def main():
    args = sys.argv[1:]
    seeds = 20
    if "--seeds" in args:
        i = args.index("--seeds")
        seeds = int(args[i + 1])
        del args[i : i + 2]
    if not args:
        sys.exit(__doc__)
    text = changed(open(args[0]).read(), args[1:])
    work = tempfile.mkdtemp()
    path = os.path.join(work, "world.toml")
    open(path, "w").write(text)
    runs = {}
    for seed in range(1, seeds + 1):
        out = os.path.join(work, f"seed-{seed}")
        subprocess.run(
            [SIM, "run", "--quiet", "--no-plots", "--force", "--seed", str(seed), path, "--out", out],
            check=True,
        )
        summary = list(csv.DictReader(open(os.path.join(out, "summary.csv"))))
        # The trigger's end, from the scenario: the last `end` of an [[outage]].
        ends = re.findall(r'^end = "([0-9.]+)(ms|s)"', text, re.M)
        end = max(float(v) / (1000 if u == "ms" else 1) for v, u in ends)
        peak = {}
        for row in csv.DictReader(open(os.path.join(out, "timeseries.csv"))):
            if float(row["t_s"]) >= end - 1e-9:
                name = row["strategy"]
                peak[name] = max(peak.get(name, 0.0), float(row["attempts_per_s"]))
        for row in summary:
            rec = row["recovery_time_s"]
            runs.setdefault(row["strategy"], []).append(
                {
                    "crashes": int(row["crashes"]),
                    "recovery": float(rec) if rec not in ("", "never") else float("inf"),
                    "peak": peak[row["strategy"]],
                    "failed": int(row["failed"]),
                }
            )
    holds = 0
    for i in range(seeds):
        none, exp, fj = runs["none"][i], runs["exponential"][i], runs["full-jitter"][i]
        one = none["crashes"] > 0 or none["recovery"] >= 3 * fj["recovery"]
        two = exp["peak"] > fj["peak"] and exp["recovery"] > fj["recovery"]
        three = fj["recovery"] < float("inf")
        holds += one and two and three
    print(f"{' '.join(args[1:]) or '(as written)'}: the claim holds for {holds} of {seeds} seeds")
    for name, rs in runs.items():
        def spread(key):
            xs = sorted(r[key] for r in rs)
            return f"{xs[0]:g}/{statistics.median(xs):g}/{xs[-1]:g}"
        print(
            f"  {name:20} crashes {spread('crashes')}  recovery {spread('recovery')}  "
            f"peak after {spread('peak')}  failed {spread('failed')}"
        )


if __name__ == "__main__":
    main()
