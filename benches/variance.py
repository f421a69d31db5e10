"""How much two strategies' runs share their luck: the variance of the
difference of a figure between two strategies, over many seeds.

    python3 benches/variance.py SIM SCENARIO A B [SEEDS] [--edit OLD NEW]

runs `SIM run --seed s --no-plots SCENARIO` for s = 1..SEEDS (50 unless
told), and for each figure prints the variance of strategy A's figure, of
strategy B's, and of A's less B's with the same seed. With `--edit`, B is
run from a copy of the scenario with the text OLD replaced by NEW (a
neighbouring setting or trigger: `--edit 'end = "22s"' 'end = "22.2s"'`),
and A and B may name the same strategy. If the two runs drew independently, Var(A - B) would be
Var A + Var B; the ratio of the two says how much common random numbers
save (Var(A - B) = Var A + Var B - 2 Cov(A, B)). Recovery time counts only
the seeds where both strategies recovered; the count is printed.
"""
import csv
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

FIGURES = ["failed", "successes_lost", "recovery_time_s", "peak_attempts_per_s", "latency_p50_s", "latency_p99_s", "attempts", "timeouts"]


def summary(sim, scenario, seed, out):
    """The rows of `sim run`'s summary of `scenario` with `seed`, by strategy."""
    subprocess.run(
        [sim, "run", "-q", "--no-plots", "--seed", str(seed), "--out", str(out), str(scenario)],
        check=True,
    )
    return {r["strategy"]: r for r in csv.DictReader(open(out / "summary.csv"))}


def main():
    args = sys.argv[1:]
    edit = None
    if "--edit" in args:
        i = args.index("--edit")
        edit = (args[i + 1], args[i + 2])
        del args[i : i + 3]
    sim, scenario, a, b = args[:4]
    seeds = int(args[4]) if len(args) > 4 else 50
    values = {f: [] for f in FIGURES}
    with tempfile.TemporaryDirectory() as tmp:
        scenario_b = Path(scenario)
        if edit:
            text = Path(scenario).read_text()
            if edit[0] not in text:
                sys.exit(f"{scenario} has no {edit[0]!r}")
            scenario_b = Path(tmp) / Path(scenario).name
            scenario_b.write_text(text.replace(edit[0], edit[1]))
        for seed in range(1, seeds + 1):
            rows_a = summary(sim, scenario, seed, Path(tmp) / f"a{seed}")
            rows_b = rows_a
            if edit:
                rows_b = summary(sim, scenario_b, seed, Path(tmp) / f"b{seed}")
            for f in FIGURES:
                x, y = rows_a[a][f], rows_b[b][f]
                if x != "" and y != "":
                    values[f].append((float(x), float(y)))
    against = f"{b} with {edit[0]!r} made {edit[1]!r}" if edit else b
    print(f"{scenario}: {a} against {against}, {seeds} seeds")
    print("figure,pairs,var_a,var_b,var_a_plus_var_b,var_diff,ratio")
    for f in FIGURES:
        pairs = values[f]
        if len(pairs) < 3:
            print(f"{f},{len(pairs)},,,,,")
            continue
        va = statistics.variance([x for x, _ in pairs])
        vb = statistics.variance([y for _, y in pairs])
        vd = statistics.variance([x - y for x, y in pairs])
        ratio = (va + vb) / vd if vd > 0 else float("inf")
        print(f"{f},{len(pairs)},{va:.6g},{vb:.6g},{va + vb:.6g},{vd:.6g},{ratio:.3g}")


if __name__ == "__main__":
    main()
