// End-to-end test of `sim serve`'s playground in headless Chromium: the first
// run's table and charts appear, changing a control re-runs and changes them,
// an invalid value shows the command line's message at its field, "compare
// with B" draws a second configuration, and nothing is requested from
// anywhere but the local server. Prints the re-run times it saw.
// Usage: node serve.test.mjs PATH-TO-sim
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { launch } from './browser.mjs';

const sim = process.argv[2];
assert.ok(sim, 'usage: node serve.test.mjs PATH-TO-sim');
const server = spawn(sim, ['serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((resolve, reject) => {
  createInterface({ input: server.stdout }).once('line', (line) => {
    const m = line.match(/http:\/\/127\.0\.0\.1:\d+\//);
    if (m) resolve(m[0]); else reject(new Error('no address in: ' + line));
  });
  server.once('exit', (code) => reject(new Error('sim serve exited: ' + code)));
});
const { browser, page, problems } = await launch({ allowOrigin: url });
const runs = (pane) => page.locator(pane).evaluate((el) => +(el.dataset.runs || 0));
const waitRuns = (pane, n) => page.waitForFunction(
  ([sel, k]) => +(document.querySelector(sel)?.dataset.runs || 0) >= k, [pane, n], { timeout: 20000 });
try {
  await page.goto(url);
  await waitRuns('#pane-a', 1);
  const table = page.locator('#pane-a .table table');
  assert.equal(await table.locator('tbody tr').count(), 5, 'the outage scenario has 5 strategies');
  for (const c of ['a-chart-load', 'a-chart-goodput', 'a-chart-backlog']) {
    assert.equal(await page.locator(`#${c} .panel canvas`).count(), 5, `${c}: a panel per strategy`);
  }
  assert.match(await page.locator('#pane-a .takeaway').innerText(), /What this run shows/);
  const before = await table.innerText();

  // Change the number of clients: a fresh run, a different table.
  const times = [];
  for (const count of ['600', '1200']) {
    const n = await runs('#pane-a');
    await page.locator('#pane-a .field[data-key="clients.count"] input').fill(count);
    await page.locator('#pane-a .field[data-key="clients.count"] input').dispatchEvent('change');
    await waitRuns('#pane-a', n + 1);
    times.push(await page.locator('#pane-a').evaluate((el) => +el.dataset.lastMs));
  }
  assert.notEqual(await table.innerText(), before, 'the table changed with the clients');
  assert.equal(await page.locator('#pane-a .field.changed[data-key="clients.count"]').count(), 1,
    'a changed field is marked');

  // An invalid value: the message at the field, naming the key.
  const base = page.locator('#pane-a .field[data-key="strategy[1].base"]');
  await base.locator('input').fill('fast');
  await base.locator('input').dispatchEvent('change');
  await page.waitForSelector('#pane-a .field.invalid[data-key="strategy[1].base"] .error', { timeout: 20000 });
  const message = await base.locator('.error').innerText();
  assert.match(message, /strategy\[1\]\.base/, message);
  assert.equal(await base.locator('input').getAttribute('aria-invalid'), 'true');

  // Fix it, then compare with B: a second pane with its own charts.
  await base.locator('input').fill('200ms');
  const n = await runs('#pane-a');
  await base.locator('input').dispatchEvent('change');
  await waitRuns('#pane-a', n + 1);
  assert.equal(await page.locator('#pane-a .field.invalid').count(), 0, 'the error is gone');
  await page.locator('#show-b').click();
  await waitRuns('#pane-b', 1);
  assert.equal(await page.locator('#b-chart-load .panel canvas').count(), 5, 'B draws its charts');
  assert.equal(await page.locator('#pane-b .table tbody tr').count(), 5);
  // Side by side, a summary wider than its pane scrolls with its names kept
  // in view, and says that more columns are to the right.
  const wideOk = await page.evaluate(() => {
    const w = document.querySelector('#pane-a .table .wide');
    const over = w.scrollWidth > w.clientWidth + 1;
    const sticky = getComputedStyle(w.querySelector('td')).position === 'sticky';
    return sticky && (!over || !!document.querySelector('#pane-a .more-columns'));
  });
  assert.ok(wideOk, 'a summary wider than its pane says it scrolls, names in view');
  // B differs from A in its clients (A has 1200, B copied them): change B's.
  const rb0 = await runs('#pane-b');
  await page.locator('#pane-b .field[data-key="clients.count"] input').fill('300');
  await page.locator('#pane-b .field[data-key="clients.count"] input').dispatchEvent('change');
  await waitRuns('#pane-b', rb0 + 1);
  assert.equal(await page.locator('#pane-b .field.differs[data-key="clients.count"]').count(), 1,
    'a field that differs from A is marked in B');
  assert.equal(await page.locator('#pane-b .field.differs[data-key="seed"]').count(), 0);
  // A and B share each figure's scale.
  const ymax = (id) => page.locator(id).evaluate((el) => +el.dataset.ymax);
  for (const f of ['chart-load', 'chart-goodput', 'chart-backlog']) {
    assert.equal(await ymax(`#a-${f}`), await ymax(`#b-${f}`), `${f}: one scale for A and B`);
  }
  // Resizing after re-runs draws again without an error.
  await page.setViewportSize({ width: 1000, height: 900 });
  await page.waitForTimeout(200);
  // Every lesson step, set up at 1280x800: the chart it talks about is drawn
  // in the lesson's box, wholly on the first screen with the step's text.
  await page.setViewportSize({ width: 1280, height: 800 });
  const steps = await page.locator('#lesson-step option').count();
  for (let i = 0; i < steps; i++) {
    await page.locator('#lesson-step').selectOption({ index: i });
    const label = await page.locator('#lesson-step option').nth(i).innerText();
    const ra0 = await runs('#pane-a');
    await page.locator('#lesson-go').click();
    await waitRuns('#pane-a', ra0 + 1);
    await page.waitForFunction(() => document.querySelectorAll('#lesson-chart canvas').length > 0, null, { timeout: 20000 });
    await page.evaluate(() => window.scrollTo(0, 0));
    const box = await page.evaluate(() => {
      const c = document.querySelector('#lesson-chart .uplot canvas').getBoundingClientRect();
      const t = document.querySelector('#lesson-card h3').getBoundingClientRect();
      return { top: c.top, bottom: c.bottom, text: t.top };
    });
    assert.ok(box.text >= 0 && box.bottom <= 800, `${label}: the lesson's chart ends at ${box.bottom} px, below 800`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  // A lesson with two configurations: set it up, and its numbers appear.
  await page.locator('#lesson-step').selectOption({ label: 'The same stall without retries' });
  const ra = await runs('#pane-a'), rb = await runs('#pane-b');
  await page.locator('#lesson-go').click();
  await waitRuns('#pane-a', ra + 1);
  await waitRuns('#pane-b', rb + 1);
  const numbers = await page.locator('#lesson-figures').innerText();
  assert.match(numbers, /^A none: requests failed \d+; B none \(edited\): requests failed \d+; B none \(edited\): [a-z ]+ 0$/, numbers);
  assert.equal(await page.locator('#pane-b .field[data-key="strategy[0].max_retries"] input').inputValue(), '0');

  // The advice: a search for A's scenario (the lesson's: the outage as shipped)
  // draws the front and lists it; a row loads its setting into B's first
  // strategy. A bad objective is refused with the command line's message.
  await page.locator('#advise-objective').fill('fast');
  await page.locator('#advise-go').click();
  await page.waitForFunction(() => document.querySelector('#advise-problem').textContent.includes('not a metric'),
    null, { timeout: 20000 });
  await page.locator('#advise-objective').fill('failed; peak_load_ratio <= 1.5');
  await page.locator('#advise-runs').fill('20');
  await page.locator('#advise-go').click();
  await page.waitForFunction(() => +(document.querySelector('#advise')?.dataset.searches || 0) >= 1, null,
    { timeout: 60000 });
  assert.equal(await page.locator('#advise-problem').innerText(), '', 'the last message is gone');
  const front = await page.locator('#advise-chart .front-point').count();
  assert.ok(front >= 1, 'the front is drawn');
  assert.equal(await page.locator('#advise-table tbody tr').count(), front, 'a row per front point');
  assert.equal(await page.locator('#advise-chart .limit').count(), 1, 'the peak limit is drawn');
  const setting = (await page.locator('#advise-table tbody tr').first().locator('.setting').innerText())
    .trim().split(/\s+/);
  const rb1 = await runs('#pane-b');
  await page.locator('#advise-table tbody tr').first().locator('.load-b').click();
  await waitRuns('#pane-b', rb1 + 1);
  const field = (key) => page.locator(`#pane-b .field[data-key="${key}"]`).locator('input, select');
  assert.equal(await field('strategy[0].backoff').inputValue(), setting[0], 'B has the backoff');
  assert.equal(await field('strategy[0].base').inputValue(), setting[1], 'B has the base');
  assert.equal(await field('strategy[0].max_retries').inputValue(), setting[3], 'B has the retries');
  assert.match(await page.locator('#pane-b .table').innerText(), /advised-1/, 'B runs the setting by its number');

  // Your own file, broken: its name, its message, and nothing of the last run.
  await page.locator('#pane-a .file').setInputFiles({ name: 'mine.toml', mimeType: 'application/toml',
    buffer: Buffer.from('name = "mine"\nduration = \n') });
  await page.waitForFunction(() => document.querySelector('#pane-a .problem').textContent.includes('mine.toml'),
    null, { timeout: 20000 });
  assert.equal(await page.locator('#pane-a .table tbody tr').count(), 0, 'no table of the last run');
  assert.equal(await page.locator('#a-chart-load canvas').count(), 0, 'no charts of the last run');
  assert.equal(await page.locator('#pane-a .scenario').inputValue(), '', 'the scenario list no longer names outage');

  // The invalid value's answer is a 422, which Chromium logs; nothing else.
  const unexpected = problems.filter((p) => !p.includes('status of 422'));
  assert.deepEqual(unexpected, [], 'no errors and no requests beyond the local server');
  console.log(`playground ok; re-runs of the outage scenario shown in ${times.join(' and ')} ms`);
} finally {
  await browser.close();
  server.kill();
}
