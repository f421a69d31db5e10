"""Drives one Python retry library, configured as its preset says, against the
failing server. Usage: python driver.py PRESET [sequential] < jobs, where each
line of jobs is "URL TIMEOUT_MS START_MS" (the job starts START_MS after the
driver, so concurrent trials do not fail and retry in lockstep); prints one
JSON line per job.

For gRPC the URL is "grpc://127.0.0.1:PORT/<behaviour>/<trial>": the harness's
gRPC server reads the behaviour and trial from the method's metadata.
"""

import json
import sys
import threading
import time

PRESET = sys.argv[1]
SEQUENTIAL = len(sys.argv) > 2 and sys.argv[2] == "sequential"


CLIENTS = {}


def botocore_client(url, timeout_s):
    """An STS client on `url` with dummy credentials, in the preset's retry
    mode (standard is the default from botocore 1.44; opted into before); one
    per job, made before any job starts (making one takes tens of
    milliseconds of CPU, which would disturb the timing of running jobs), or
    one for all when the jobs run one after another (the quota is the
    client's)."""
    key = "all" if SEQUENTIAL else (url, timeout_s)
    if key not in CLIENTS:
        CLIENTS[key] = make_botocore_client(url, timeout_s)
    return CLIENTS[key]


def make_botocore_client(url, timeout_s, session=[]):
    import botocore.session
    from botocore.config import Config

    if not session:
        session.append(botocore.session.get_session())
    client = session[0].create_client(
        "sts",
        region_name="us-east-1",
        endpoint_url=url,
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="secret",
        config=Config(
            retries={"mode": "legacy" if PRESET == "aws-sdk-legacy" else "standard"},
            read_timeout=timeout_s,
            connect_timeout=timeout_s,
        ),
    )
    return client


def call_botocore(url, timeout_s):
    botocore_client(url, timeout_s).get_caller_identity()


def call_urllib3(url, timeout_s):
    import urllib3

    # PoolManager's default retries are Retry.DEFAULT (Retry(3)).
    r = urllib3.PoolManager().request("GET", url, timeout=timeout_s)
    if r.status >= 400:
        raise RuntimeError(f"status {r.status}")


def tenacity_call(wait):
    import tenacity
    import urllib3

    http = urllib3.PoolManager(retries=False)

    def attempt(url, timeout_s):
        r = http.request("GET", url, timeout=timeout_s)
        if r.status >= 400:
            raise RuntimeError(f"status {r.status}")

    decorated = tenacity.retry(wait=wait)(attempt) if wait else tenacity.retry(attempt)
    return decorated


def grpc_call():
    import grpc

    config = json.dumps(
        {
            "methodConfig": [
                {
                    "name": [{"service": "conformance.Failing"}],
                    "retryPolicy": {
                        "maxAttempts": 4,
                        "initialBackoff": "0.1s",
                        "maxBackoff": "1s",
                        "backoffMultiplier": 2,
                        "retryableStatusCodes": ["UNAVAILABLE"],
                    },
                }
            ],
            "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1},
        }
    )
    channels = {}

    def call(url, timeout_s):
        target, _, path = url[len("grpc://"):].partition("/")
        behaviour, _, trial = path.partition("/")
        key = target if SEQUENTIAL else url
        if key not in channels:
            channels[key] = grpc.insecure_channel(
                target,
                options=[("grpc.service_config", config), ("grpc.enable_retries", 1)],
            )
        method = channels[key].unary_unary("/conformance.Failing/Call")
        method(
            b"",
            timeout=timeout_s,
            metadata=(("x-behaviour", behaviour), ("x-trial", trial)),
        )

    return call


def caller():
    if PRESET in ("aws-sdk-standard", "aws-sdk-standard-pre-1.44", "aws-sdk-legacy"):
        return call_botocore
    if PRESET == "urllib3":
        return call_urllib3
    if PRESET == "tenacity":
        return tenacity_call(None)
    if PRESET == "tenacity-random-exponential":
        import tenacity

        return tenacity_call(tenacity.wait_random_exponential(multiplier=1, max=60))
    if PRESET == "grpc":
        return grpc_call()
    raise SystemExit(f"no Python driver for {PRESET}")


def main():
    call = caller()
    jobs = [line.split() for line in sys.stdin.read().splitlines() if line.strip()]
    if call is call_botocore:
        for url, ms, *_ in jobs:
            botocore_client(url, int(ms) / 1000)
    results = [None] * len(jobs)

    def run(i, url, ms, start="0"):
        if not SEQUENTIAL:
            time.sleep(int(start) / 1000)
        try:
            call(url, int(ms) / 1000)
            results[i] = {"url": url, "ok": True}
        except Exception as e:  # every failure is a result to report
            results[i] = {"url": url, "ok": False, "error": type(e).__name__}

    if SEQUENTIAL:
        for i, (url, ms, *_) in enumerate(jobs):
            run(i, url, ms)
    else:
        threads = [threading.Thread(target=run, args=(i, *job)) for i, job in enumerate(jobs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    for r in results:
        print(json.dumps(r))


main()
