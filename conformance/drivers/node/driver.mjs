// Drives one Node.js retry library, configured as its preset says, against the
// failing server. Usage: node driver.mjs PRESET [sequential] < jobs, where
// each line of jobs is "URL TIMEOUT_MS START_MS" (the job starts START_MS
// after the driver, so concurrent trials do not fail and retry in lockstep);
// prints one JSON line per job.
import { readFileSync } from 'node:fs';

const [preset, order] = process.argv.slice(2);
const jobs = readFileSync(0, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => line.split(' '))
  .map(([url, ms, start]) => ({ url, timeout: Number(ms), start: Number(start || 0) }));

async function client() {
  switch (preset) {
    case 'got': {
      const { default: got } = await import('got');
      // got's defaults; only the request timeout is set, so a hang ends.
      return (url, timeout) => got(url, { timeout: { request: timeout } }).text();
    }
    case 'axios-retry':
    case 'axios-retry-exponential': {
      const { default: axios } = await import('axios');
      const { default: axiosRetry } = await import('axios-retry');
      const http = axios.create();
      axiosRetry(
        http,
        preset === 'axios-retry' ? {} : { retryDelay: axiosRetry.exponentialDelay },
      );
      return (url, timeout) => http.get(url, { timeout });
    }
    case 'cockatiel': {
      const { retry, handleAll, ExponentialBackoff } = await import('cockatiel');
      const policy = retry(handleAll, { backoff: new ExponentialBackoff() });
      return (url, timeout) =>
        policy.execute(async () => {
          const r = await fetch(url, { signal: AbortSignal.timeout(timeout) });
          await r.arrayBuffer();
          if (!r.ok) throw new Error(`status ${r.status}`);
        });
    }
    default:
      throw new Error(`no Node.js driver for ${preset}`);
  }
}

const call = await client();
const one = async ({ url, timeout, start }) => {
  if (order !== 'sequential') await new Promise((r) => setTimeout(r, start));
  try {
    await call(url, timeout);
    return { url, ok: true };
  } catch (e) {
    return { url, ok: false, error: String(e.code || e.message || e) };
  }
};
const results = [];
if (order === 'sequential') {
  for (const j of jobs) results.push(await one(j));
} else {
  results.push(...(await Promise.all(jobs.map(one))));
}
for (const r of results) console.log(JSON.stringify(r));
