#!/usr/bin/env bash
# Browser tests: report.html (a run's and a sweep's) and the `sim serve`
# playground in Debian's Chromium, headless, driven by playwright-core. Installs what it needs on a fresh
# machine: chromium (apt) and the pinned playwright-core (npm ci).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
if ! command -v chromium >/dev/null 2>&1; then
    apt-get install -y -q chromium >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }
fi
(cd "$here" && npm ci --no-audit --no-fund --silent)
(cd "$root" && cargo build --release --locked -q)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$root/target/release/sim" run -q "$root/scenarios/outage.toml" --out "$work/run" --no-plots
"$root/target/release/sim" run -q "$root/tests/fixtures/sweep.toml" --out "$work/sweep" --no-plots
"$root/target/release/sim" run -q "$root/tests/fixtures/grid.toml" --out "$work/grid" --no-plots
"$root/target/release/sim" run -q "$root/scenarios/fleet.toml" --out "$work/fleet" --no-plots
"$root/target/release/sim" run -q "$root/scenarios/call-chain.toml" --out "$work/chain" --no-plots
node "$here/report.test.mjs" "$work/run/report.html"
node "$here/fleet.test.mjs" "$work/fleet/report.html"
node "$here/tiers.test.mjs" "$work/chain/report.html"
node "$here/sweep.test.mjs" "$work/sweep/report.html" line
node "$here/sweep.test.mjs" "$work/grid/report.html" map
node "$here/serve.test.mjs" "$root/target/release/sim"
