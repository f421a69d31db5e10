#!/usr/bin/env python3
"""The conformance harness: drives real retry libraries against a failing local
server and compares what they do with the simulator's presets.

    python3 conformance/run.py [--only PRESET ...] [--trials N]

It installs each library at its pinned version (npm, PyPI, crates.io, Debian's
Go packages), runs it with its default configuration against the server in
server.py, and compares, per preset:

- limit: the retries one request makes when every attempt fails;
- delays: each retry's delay distribution, against `sim delays` samples;
- outcomes: which failures (429, 5xx, 4xx, reset, timeout) are retried;
- retry-after: the delay after a 503 (or 429) that carries a Retry-After;
- budget: the retries granted to requests made one after another while every
  attempt fails, against a run of the simulator's engine (gRPC's throttle,
  the AWS quota).

It writes conformance/results.toml (read by the test suite), RESULTS.md, and
the table in docs/src/libraries.md between its markers. See conformance/README.md for the
tolerances and why.
"""

import argparse
import csv
import datetime
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from server import AttemptLog, FailingServer  # noqa: E402

CACHE = Path(os.environ.get("CONFORMANCE_CACHE", HERE / ".cache"))
SIM = ROOT / "target" / "release" / "sim"

# Pinned versions. Python packages per environment (two botocore releases
# behave differently, so they get two environments).
PY_ENVS = {
    "py-current": [
        "botocore==1.44.8",
        "grpcio==1.85.3",
        "urllib3==2.8.0",
        "tenacity==9.2.1",
    ],
    "py-botocore-1.40": ["botocore==1.40.76", "urllib3==2.8.0"],
}
GO_PACKAGES = ["golang-go", "golang-github-hashicorp-go-retryablehttp-dev"]

# preset -> (driver, environment, what the row says was measured)
MEASURED = {
    "got": ("node", None, "got 16.1.0"),
    "axios-retry": ("node", None, "axios-retry 4.5.0, axios 1.21.1"),
    "axios-retry-exponential": ("node", None, "axios-retry 4.5.0, axios 1.21.1"),
    "cockatiel": ("node", None, "cockatiel 4.0.0"),
    "grpc": ("python", "py-current", "grpcio 1.85.3"),
    "aws-sdk-standard": ("python", "py-current", "botocore 1.44.8"),
    "aws-sdk-standard-pre-1.44": ("python", "py-botocore-1.40", "botocore 1.40.76 (standard mode)"),
    "aws-sdk-legacy": ("python", "py-botocore-1.40", "botocore 1.40.76 (its default, legacy)"),
    "urllib3": ("python", "py-current", "urllib3 2.8.0"),
    "tenacity": ("python", "py-current", "tenacity 9.2.1"),
    "tenacity-random-exponential": ("python", "py-current", "tenacity 9.2.1"),
    "backoff-crate": ("rust", None, "backoff 0.4.0"),
    "backon": ("rust", None, "backon 1.6.0"),
    "tokio-retry": ("rust", None, "tokio-retry 0.3.0"),
    "go-retryablehttp": ("go", None, "go-retryablehttp 0.7.1 (Debian), Go 1.19"),
}
NOT_MEASURED = {
    "polly": "Polly is .NET: no .NET SDK can be installed here (Debian has none, NuGet is not reachable)",
    "polly-exponential": "as polly",
    "polly-jitter": "as polly",
    "resilience4j": "resilience4j is on Maven Central, which is not reachable here",
    "envoy": "read from Envoy's documentation: no Envoy build can be installed here",
    "envoy-retry-budget": "as envoy",
    "grpc-full-jitter": "the historical formula of gRFC A6; no current grpc release uses it",
    "grpc-connection": "reconnection backoff, from gRPC's connection-backoff.md; a refused connection leaves no attempt for the server to log",
}

# Failures tried for the outcome check, as the simulator names them, and how
# the server makes them.
OUTCOMES = ["429", "500", "502", "503", "504", "400", "401", "409", "reset", "timeout"]
SERVER_WHAT = {o: o for o in OUTCOMES} | {"timeout": "hang"}

# Tolerances (conformance/README.md says why).
EARLY_S = 0.005  # a measured gap may undercut the delay by at most 5 ms
LATE_S = 0.030  # and exceed it by 30 ms of client overhead
LATE_SHARE = 0.02  # plus 2% of the delay (timers of long sleeps)
QUANTILES = [0.1, 0.25, 0.5, 0.75, 0.9]
Z = 4.5  # order-statistic band: p +- 4.5 sqrt(p (1 - p) / n)
TIMEOUT_MS = 1000  # the attempt timeout set where a hang must end
PATIENT_MS = 30000  # every other attempt: longer than any delay checked
RETRY_AFTER_S = 3
UNLIMITED_CHECKED = 5  # retries watched for an unlimited preset
STAGGER_MS = 15  # between the starts of concurrent jobs


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, **kw)


# ---------------------------------------------------------------- installing


def install(drivers):
    CACHE.mkdir(parents=True, exist_ok=True)
    paths = {}
    if "node" in drivers:
        node = HERE / "drivers" / "node"
        if not (node / "node_modules").exists():
            sh(["npm", "ci", "--no-audit", "--no-fund", "--silent"], cwd=node)
        paths["node"] = ["node", str(node / "driver.mjs")]
    for env, pins in PY_ENVS.items():
        if env not in drivers:
            continue
        venv = CACHE / env
        stamp = venv / "pins.txt"
        if not stamp.exists() or stamp.read_text() != "\n".join(pins):
            shutil.rmtree(venv, ignore_errors=True)
            sh([sys.executable, "-m", "venv", str(venv)])
            sh([str(venv / "bin" / "pip"), "install", "-q", *pins])
            stamp.write_text("\n".join(pins))
        paths[env] = [str(venv / "bin" / "python"), str(HERE / "drivers" / "python" / "driver.py")]
    if "rust" in drivers:
        rust = HERE / "drivers" / "rust"
        target = CACHE / "rust-target"
        sh(
            ["cargo", "build", "--release", "--locked", "-q", "--target-dir", str(target)],
            cwd=rust,
        )
        paths["rust"] = [str(target / "release" / "conformance-driver")]
    if "go" in drivers:
        if not shutil.which("go") or not Path(
            "/usr/share/gocode/src/github.com/hashicorp/go-retryablehttp"
        ).exists():
            apt = ["apt-get", "install", "-y", "-q", *GO_PACKAGES]
            if subprocess.run(apt, stdout=subprocess.DEVNULL).returncode != 0:
                sh(["apt-get", "update", "-q"], stdout=subprocess.DEVNULL)
                sh(apt, stdout=subprocess.DEVNULL)
        out = CACHE / "go-driver"
        env = dict(os.environ, GO111MODULE="off", GOPATH="/usr/share/gocode", GOCACHE=str(CACHE / "gocache"))
        sh(["go", "build", "-o", str(out), "driver.go"], cwd=HERE / "drivers" / "go", env=env)
        paths["go"] = [str(out)]
    return paths


# ---------------------------------------------------------------- the gRPC server


def start_grpc_server(log):
    """A gRPC server whose one method fails as its metadata says; needs grpcio,
    so it runs inside the py-current environment's interpreter: this harness
    re-executes itself there when gRPC is measured."""
    import time
    from concurrent import futures

    import grpc

    from server import failure_for

    def handler(request, context):
        md = dict(context.invocation_metadata())
        behaviour, trial = md.get("x-behaviour", ""), md.get("x-trial", "")
        attempt = log.add(trial, time.monotonic())
        fate = failure_for(f"/{behaviour}/{trial}", attempt)
        if fate is None:
            return b""
        kind, status, ra = fate
        if kind == "hang":
            time.sleep(3600)
        if ra is not None:
            context.set_trailing_metadata((("grpc-retry-pushback-ms", str(ra * 1000)),))
        # gRPC's own mapping of HTTP statuses (doc/http-grpc-status-mapping.md):
        # 429, 502, 503 and 504 are UNAVAILABLE, the rest UNKNOWN or INTERNAL.
        code = {
            429: grpc.StatusCode.UNAVAILABLE,
            502: grpc.StatusCode.UNAVAILABLE,
            503: grpc.StatusCode.UNAVAILABLE,
            504: grpc.StatusCode.UNAVAILABLE,
            400: grpc.StatusCode.INTERNAL,
            401: grpc.StatusCode.UNAUTHENTICATED,
        }.get(status, grpc.StatusCode.UNKNOWN)
        if kind == "reset":
            code = grpc.StatusCode.UNAVAILABLE
        context.abort(code, "failing on purpose")

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=256))
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                "conformance.Failing",
                {"Call": grpc.unary_unary_rpc_method_handler(handler)},
            ),
        )
    )
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, port


# ---------------------------------------------------------------- running


class Runner:
    def __init__(self, paths, log, http_port, grpc_port):
        self.paths, self.log = paths, log
        self.http, self.grpc = f"http://127.0.0.1:{http_port}", f"grpc://127.0.0.1:{grpc_port}"

    def run(self, preset, jobs, sequential=False):
        """Runs `jobs` ([(behaviour, trial, timeout_ms)]) and returns the
        arrivals of each trial."""
        driver, env, _ = MEASURED[preset]
        cmd = self.paths[env or driver] + [preset] + (["sequential"] if sequential else [])
        base = self.grpc if preset == "grpc" else self.http
        # Starts spread STAGGER_MS apart, interleaving the checks.
        order = sorted(range(len(jobs)), key=lambda i: (i * 7919) % len(jobs))
        lines = "".join(
            f"{base}/{jobs[i][0]}/{jobs[i][1]} {jobs[i][2]} {rank * STAGGER_MS}\n"
            for rank, i in enumerate(order)
        )
        self.log.take()
        proc = subprocess.run(cmd, input=lines, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"{preset}: driver failed: {proc.stderr[-2000:]}")
        return self.log.take()


def gaps(times):
    return [b - a for a, b in zip(times, times[1:])]


def sim_toml():
    out = subprocess.run([str(SIM), "presets", "--toml"], check=True, capture_output=True, text=True)
    return {p["name"]: p for p in tomllib.loads(out.stdout)["preset"]}


def sim_delays(name, retries, after=None, retry_after=None, samples=20000):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "s.csv"
        cmd = [str(SIM), "delays", name, "--retries", str(retries), "--samples", str(samples),
               "--samples-csv", str(path)]
        if after:
            cmd += ["--after", after]
        if retry_after:
            cmd += ["--retry-after", retry_after]
        subprocess.run(cmd, check=True, capture_output=True)
        by = {}
        for row in csv.DictReader(path.open()):
            by.setdefault(int(row["retry"]), []).append(float(row["delay_s"]))
    return {k: sorted(v) for k, v in by.items()}


def quantile(xs, p):
    """The order statistic at p (nearest rank), xs sorted."""
    i = min(len(xs) - 1, max(0, math.ceil(p * len(xs)) - 1))
    return xs[i]


def compare(measured, expected):
    """Whether each quantile of `measured` lies in the band the simulated
    samples `expected` allow; returns (ok, worst quantile's description)."""
    m = sorted(measured)
    n = len(m)
    worst, ok = "", True
    for p in QUANTILES:
        half = Z * math.sqrt(p * (1 - p) / n)
        lo = quantile(expected, max(0.0, p - half)) - EARLY_S
        hi_q = quantile(expected, min(1.0, p + half))
        hi = hi_q + LATE_S + LATE_SHARE * hi_q
        got = quantile(m, p)
        inside = lo <= got <= hi
        if not inside or not worst:
            worst = f"p{int(p * 100)} {got * 1000:.0f} ms in [{lo * 1000:.0f}, {hi * 1000:.0f}]"
        ok &= inside
        if not inside:
            break
    return ok, worst


def fmt_ms(xs):
    xs = sorted(xs)
    if not xs:
        return "-"
    med = quantile(xs, 0.5)
    return f"{med * 1000:.0f} [{xs[0] * 1000:.0f}, {xs[-1] * 1000:.0f}]"


def engine_budget_retries(name):
    """Retries the engine grants one client making requests one after another
    while every attempt is a 503."""
    text = f"""name = "budget-drill"
description = "one client, requests one after another, every attempt after 2 s a 503"
seed = 1
duration = "3600s"
[clients]
model = "closed"
count = 1
think = {{ dist = "constant", value = "10ms" }}
[network]
latency = {{ dist = "constant", value = "1ms" }}
[server]
workers = 1
queue = 10
service = {{ dist = "constant", value = "1ms" }}
[[outage]]
kind = "503"
start = "2s"
end = "3600s"
[metrics]
baseline = "1s"
[retry]
timeout = "10s"
[[strategy]]
name = "x"
preset = "{name}"
"""
    with tempfile.TemporaryDirectory() as d:
        sc = Path(d) / "b.toml"
        sc.write_text(text)
        subprocess.run([str(SIM), "run", str(sc), "--out", f"{d}/out", "--no-plots", "-q"],
                       check=True, capture_output=True)
        row = next(csv.DictReader(open(f"{d}/out/summary.csv")))
    return int(row["retries"])


def check(runner, name, facts, trials):
    """Every check of one preset: a dict of results."""
    retry_on = set(facts["retry_on"])
    unlimited = facts["max_retries"] == "unlimited"
    limit = UNLIMITED_CHECKED if unlimited else facts["max_retries"]
    # The failure the limit and delays are measured on.
    fail = next((o for o in ["503", "reset", "500"] if o in retry_on), "503")
    if name == "grpc":
        fail = "503"
    mode = f"upto{UNLIMITED_CHECKED}" if unlimited else "fail"
    # A 503 with a Retry-After, or a 429 where only that is retried; a
    # library that retries neither is still asked (urllib3 retries a 503
    # that carries a Retry-After, which no preset can say).
    ra_status = next((s for s in ["503", "429"] if s in retry_on), "503")
    jobs = [(f"{mode}-{SERVER_WHAT[fail]}", f"d{i}", PATIENT_MS) for i in range(trials)]
    jobs += [
        (f"first-{SERVER_WHAT[o]}", f"o-{o}-{i}", TIMEOUT_MS if o == "timeout" else PATIENT_MS)
        for o in OUTCOMES
        for i in range(4)
    ]
    ra_trials = max(20, trials // 3)
    if ra_status:
        jobs += [(f"first-{ra_status}-ra{RETRY_AFTER_S}", f"ra{i}", PATIENT_MS) for i in range(ra_trials)]
    arrivals = runner.run(name, jobs)
    res = {"name": name, "measured_on": MEASURED[name][2], "fingerprint": facts["fingerprint"]}

    # Limit.
    counts = sorted(len(arrivals.get(f"d{i}", [])) - 1 for i in range(trials))
    res["limit_expected"] = f">= {limit} (unlimited)" if unlimited else str(limit)
    res["limit_measured"] = (
        f"{counts[0]}" if counts[0] == counts[-1] else f"{counts[0]} to {counts[-1]}"
    )
    res["limit_ok"] = counts[0] == counts[-1] == limit
    if unlimited:
        res["limit_measured"] += " (then a success)"

    # Delays, per retry.
    expected = sim_delays(name, limit, after=fail)
    rows, ok_all, worst = [], True, ""
    for k in range(1, limit + 1):
        ms = [gaps(arrivals.get(f"d{i}", []))[k - 1] for i in range(trials)
              if len(arrivals.get(f"d{i}", [])) > k]
        if not ms or k not in expected:
            ok_all = False
            continue
        ok, w = compare(ms, expected[k])
        rows.append({"retry": k, "measured_ms": fmt_ms(ms), "simulated_ms": fmt_ms(expected[k]), "ok": ok})
        if not ok and ok_all:
            worst = f"retry {k}: {w}"
        ok_all &= ok
    res["delays"] = rows
    res["delays_ok"] = ok_all
    res["delays_note"] = worst

    # Outcomes.
    retried = {o: sum(len(arrivals.get(f"o-{o}-{i}", [])) >= 2 for i in range(4)) for o in OUTCOMES}
    measured_on = {o for o, c in retried.items() if c == 4}
    mixed = {o for o, c in retried.items() if 0 < c < 4}
    expected_on = retry_on & set(OUTCOMES)
    res["outcomes_measured"] = " ".join(o for o in OUTCOMES if o in measured_on)
    res["outcomes_mixed"] = " ".join(sorted(mixed))
    res["outcomes_expected"] = " ".join(o for o in OUTCOMES if o in expected_on)
    res["outcomes_ok"] = measured_on == expected_on and not mixed

    # Retry-After.
    ms = [gaps(arrivals.get(f"ra{i}", []))[0] for i in range(ra_trials)
          if len(arrivals.get(f"ra{i}", [])) >= 2]
    if ra_status in retry_on or ra_status in facts.get("retry_on_hinted", []):
        exp = sim_delays(name, 1, after=ra_status, retry_after=f"{RETRY_AFTER_S}s")[1]
        ok, w = compare(ms, exp) if len(ms) == ra_trials else (False, f"{len(ms)} of {ra_trials} retried")
        simulated = fmt_ms(exp)
    else:
        ok = not ms
        w = f"{len(ms)} of {ra_trials} retried, after {fmt_ms(ms)} ms" if ms else ""
        simulated = "not retried"
    res["retry_after"] = {
        "status": ra_status,
        "measured_ms": fmt_ms(ms) if ms else "not retried",
        "simulated_ms": simulated,
        "simulated_rule": facts["retry_after"],
        "ok": ok,
        "note": "" if ok else w,
    }

    # Budget.
    # Budget: enough requests, one after another, that the budget runs dry
    # (AWS's 500 tokens at 5 a retry last 50 requests of 2 retries); the
    # engine's run is long enough for the same.
    if facts["budget"]["kind"] != "none":
        requests = 120
        seq = runner.run(
            name, [("fail-503", f"b{i}", PATIENT_MS) for i in range(requests)], sequential=True
        )
        per = [len(seq.get(f"b{i}", [])) - 1 for i in range(requests)]
        got = sum(per)
        want = engine_budget_retries(name)
        res["budget"] = {
            "kind": facts["budget"]["kind"],
            "requests": requests,
            "retries_measured": got,
            "retries_simulated": want,
            "dry_after_request": next((i + 1 for i in range(requests) if not any(per[i:])), requests),
            "ok": got == want,
        }
    return res


# ---------------------------------------------------------------- reporting


def verdict(r):
    parts = [r["limit_ok"], r["delays_ok"], r["outcomes_ok"]]
    parts += [r["retry_after"]["ok"]] if "retry_after" in r else []
    parts += [r["budget"]["ok"]] if "budget" in r else []
    return "matches" if all(parts) else "differs"


def summary(r):
    """What differed, in a line."""
    out = []
    if not r["limit_ok"]:
        out.append(f"retries {r['limit_measured']}, preset {r['limit_expected']}")
    if not r["delays_ok"]:
        out.append(f"delays {r['delays_note']}")
    if not r["outcomes_ok"]:
        out.append(f"retried {r['outcomes_measured']}, preset {r['outcomes_expected']}")
    if "retry_after" in r and not r["retry_after"]["ok"]:
        out.append(f"Retry-After {r['retry_after']['note']}")
    if "budget" in r and not r["budget"]["ok"]:
        b = r["budget"]
        out.append(f"budget {b['retries_measured']} retries, engine {b['retries_simulated']}")
    return "; ".join(out)


def mark(ok):
    return "yes" if ok else "**no**"


def table(results, facts, date):
    lines = [
        f"Measured {date} with `python3 conformance/run.py` on Linux x86_64 (Node.js "
        f"{node_version()}, Python {sys.version.split()[0]}). Each row: the preset's library at the "
        "version named, default configuration, against a local server that fails on purpose.",
        "",
        "| preset | measured on | retries: sim / lib | delays match | retried outcomes (lib) | Retry-After: sim / lib (ms) | budget retries: sim / lib | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in facts:
        r = results.get(name)
        if r is None:
            continue
        if "not_measured" in r:
            lines.append(f"| `{name}` | not measured: {r['not_measured']} | | | | | | |")
            continue
        delays = mark(r["delays_ok"]) + (f" ({r['delays_note']})" if r["delays_note"] else "")
        outc = r["outcomes_measured"] or "none"
        if not r["outcomes_ok"]:
            outc += f" (sim: {r['outcomes_expected'] or 'none'})"
        ra = "-"
        if "retry_after" in r:
            a = r["retry_after"]
            ra = f"{a['simulated_ms']} / {a['measured_ms']} ({a['status']}, {a['simulated_rule']})" + ("" if a["ok"] else " **no**")
        bud = "-"
        if "budget" in r:
            b = r["budget"]
            bud = f"{b['retries_simulated']} / {b['retries_measured']}" + ("" if b["ok"] else " **no**")
        lim = f"{r['limit_expected']} / {r['limit_measured']}" + ("" if r["limit_ok"] else " **no**")
        lines.append(
            f"| `{name}` | {r['measured_on']} | {lim} | {delays} | {outc} | {ra} | {bud} | {verdict(r)} |"
        )
    return "\n".join(lines) + "\n"


def node_version():
    try:
        return subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "?"


def write_toml(results, path, date):
    def val(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int):
            return str(v)
        return json.dumps(v)

    out = [
        "# Written by conformance/run.py: what the real libraries did, preset by preset.",
        "# tests/it/conformance.rs checks that every preset has a row measured on its",
        "# current definition (the fingerprint `sim presets --toml` prints).",
        f'date = "{date}"',
        "",
    ]
    for name, r in results.items():
        out.append("[[preset]]")
        for k, v in r.items():
            if isinstance(v, (dict, list)):
                continue
            out.append(f"{k} = {val(v)}")
        if "not_measured" not in r:
            out.append(f'verdict = "{verdict(r)}"')
        for k in ("retry_after", "budget"):
            if k in r:
                out.append(f"[preset.{k}]")
                out += [f"{kk} = {val(vv)}" for kk, vv in r[k].items()]
        for d in r.get("delays", []):
            out.append("[[preset.delays]]")
            out += [f"{kk} = {val(vv)}" for kk, vv in d.items()]
        out.append("")
    path.write_text("\n".join(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", help="presets to measure (default: all)")
    ap.add_argument("--trials", type=int, default=100, help="requests per delay check (100)")
    ap.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if a measurable preset differs from its library "
        "(a preset that differs is measured once more first: timing noise rarely repeats)",
    )
    a = ap.parse_args()
    if not SIM.exists():
        sh(["cargo", "build", "--release", "-q"], cwd=ROOT)
    facts = sim_toml()
    names = a.only or list(facts)
    unknown = [n for n in names if n not in facts]
    if unknown:
        sys.exit(f"unknown preset(s): {', '.join(unknown)}")
    # The gRPC server needs grpcio: re-run inside the environment that has it.
    need = {MEASURED[n][1] or MEASURED[n][0] for n in names if n in MEASURED}
    paths = install(need | ({"py-current"} if "grpc" in names else set()))
    if "grpc" in names and os.environ.get("CONFORMANCE_IN_VENV") != "1":
        py = paths["py-current"][0]
        os.execve(py, [py, __file__, *sys.argv[1:]], dict(os.environ, CONFORMANCE_IN_VENV="1"))
    log = AttemptLog()
    http = FailingServer(log).start()
    grpc_port, grpc_server = 0, None
    if "grpc" in names:
        grpc_server, grpc_port = start_grpc_server(log)
    runner = Runner(paths, log, http.port, grpc_port)
    date = datetime.date.today().isoformat()
    old = {}
    results_path = HERE / "results.toml"
    if a.only and results_path.exists():
        old = {p["name"]: p for p in tomllib.loads(results_path.read_text())["preset"]}
        for p in old.values():
            p.pop("verdict", None)
    results = {}
    for name in facts:
        if name not in names:
            if name in old:
                results[name] = old[name]
            continue
        if name in NOT_MEASURED:
            results[name] = {"name": name, "fingerprint": facts[name]["fingerprint"],
                             "not_measured": NOT_MEASURED[name]}
            continue
        if name not in MEASURED:
            sys.exit(f"{name}: neither measured nor explained as not measurable")
        print(f"measuring {name} ...", flush=True)
        results[name] = check(runner, name, facts[name], a.trials)
        if a.check and verdict(results[name]) != "matches":
            print(f"  differs: {summary(results[name])}; measuring once more", flush=True)
            results[name] = check(runner, name, facts[name], a.trials)
        print(f"  {verdict(results[name])}", flush=True)
    if grpc_server is not None:
        grpc_server.stop(grace=None)
    if a.check:
        measured = [n for n in names if "not_measured" not in results[n]]
        bad = [n for n in measured if verdict(results[n]) != "matches"]
        for n in bad:
            print(f"{n}: differs from its library: {summary(results[n])}")
        print(f"{len(measured) - len(bad)} of {len(measured)} measured presets match their libraries")
        sys.stdout.flush()
        os._exit(1 if bad else 0)
    write_toml(results, results_path, date)
    md = table(results, facts, date)
    (HERE / "RESULTS.md").write_text("# Presets against the real libraries\n\n" + md)
    readme = ROOT / "docs" / "src" / "libraries.md"
    text = readme.read_text()
    begin, end = "<!-- conformance:begin -->", "<!-- conformance:end -->"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        readme.write_text(head + begin + "\n" + md + end + tail)
    print(md)


if __name__ == "__main__":
    main()
    # The servers' threads (and gRPC's hanging handlers) must not keep the
    # process alive.
    sys.stdout.flush()
    os._exit(0)
