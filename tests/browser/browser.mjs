// Starts Debian's Chromium headless through playwright-core, with the flags
// that keep it off the (closed) network, in a fresh profile. Collects page
// errors, console errors and any request that leaves the page's own origin.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export async function launch({ allowOrigin = null } = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'retry-storm-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic',
    ],
  });
  const page = browser.pages()[0] || (await browser.newPage());
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('request', (r) => {
    const u = r.url();
    if (u.startsWith('file:') || u.startsWith('data:') || u.startsWith('blob:')) return;
    if (allowOrigin && u.startsWith(allowOrigin)) return;
    problems.push(`request: ${u}`);
  });
  return { browser, page, problems };
}
