"""Reference figures for tests/it/aws.rs from the AWS blog's own simulator.

The blog "Exponential Backoff and Jitter" (AWS Architecture Blog, 2015) ran a
public Python script, aws-samples/aws-arch-backoff-simulator,
src/backoff_simulator.py. This driver imports that script (written for
Python 2: replace `xrange` by `range`, and drop the last line, which runs
the whole sweep on import; nothing else) and runs its
model N = 10 and 100 clients, RUNS times per strategy, printing the mean and
standard deviation of its write calls and of its completion time (ms):

    git clone https://github.com/aws-samples/aws-arch-backoff-simulator
    sed -e 's/xrange/range/g' -e 's/^run()$//' \
        aws-arch-backoff-simulator/src/backoff_simulator.py > bsim.py
    python3 conformance/aws_blog.py bsim.py 10,100 1000

The figures of 2026-12-06 (seed 20151, Python 3.11, 1 000 runs each) are in
`tests/it/aws.rs`.
"""
import importlib.util
import io
import random
import statistics
import sys


def main():
    path, clients, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    spec = importlib.util.spec_from_file_location("bsim", path)
    bsim = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bsim)
    random.seed(20151)
    print("clients,strategy,runs,calls_mean,calls_sd,time_ms_mean,time_ms_sd")
    for n in (int(x) for x in clients.split(",")):
        for cls, name in bsim.backoff_types:
            calls, times = [], []
            for _ in range(runs):
                stats = bsim.Stats()
                queue, _ = bsim.setup_sim(n, cls, io.StringIO(), stats)
                times.append(bsim.run_sim(queue))
                calls.append(stats.calls)
            print(
                f"{n},{name},{runs},{statistics.mean(calls):.2f},{statistics.stdev(calls):.2f},"
                f"{statistics.mean(times):.1f},{statistics.stdev(times):.1f}"
            )


if __name__ == "__main__":
    main()
