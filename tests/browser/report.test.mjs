// End-to-end test of report.html in Debian's Chromium, headless: the page
// loads from a file with no request to anywhere, shows its summary table and
// three charts, a strategy toggle hides its series, hovering shows values, and
// sorting the table reorders it. Usage: node report.test.mjs REPORT.html
import assert from 'node:assert/strict';
import { launch } from './browser.mjs';

const file = process.argv[2];
assert.ok(file, 'usage: node report.test.mjs REPORT.html');
const { browser, page, problems } = await launch();
try {
  await page.goto('file://' + file);
  // The summary table: one row per strategy, with the figures of summary.csv.
  const rows = await page.locator('#summary-table tbody tr').count();
  assert.ok(rows >= 1, 'the summary table has rows');
  const heads = await page.locator('#summary-table thead th').allTextContents();
  assert.deepEqual(heads.slice(0, 3), ['strategy', 'failed', 'amplification']);
  // Three charts, each a uPlot canvas with one legend entry per series.
  for (const id of ['chart-load', 'chart-goodput', 'chart-backlog']) {
    assert.equal(await page.locator(`#${id} canvas`).count(), 1, `${id} draws a canvas`);
  }
  const strategies = await page.locator('#toggles button[data-i]').count();
  assert.equal(strategies, rows, 'one toggle per strategy');
  // Hover the middle of the load chart: the legend shows numbers, not dashes.
  const over = page.locator('#chart-load .u-over');
  const box = await over.boundingBox();
  await page.mouse.move(box.x + box.width * 0.25, box.y + box.height / 2);
  const legend = await page.locator('#chart-load .u-legend .u-value').allTextContents();
  assert.ok(legend.some((v) => /^\d/.test(v)), `hover shows values: ${legend}`);
  // Hide the first strategy: its series is hidden in every chart.
  await page.locator('#toggles button[data-i="0"]').click();
  assert.equal(await page.locator('#toggles button[data-i="0"]').getAttribute('aria-pressed'), 'false');
  const hidden = await page.locator('.u-legend .u-series.u-off').count();
  assert.ok(hidden >= 3, `the strategy is off in the three legends (${hidden})`);
  // Drag to zoom on the load chart: every chart's time range follows.
  const range = (id) => page.locator('#' + id).evaluate((el) => [+el.dataset.xmin, +el.dataset.xmax]);
  const before = await range('chart-goodput');
  await page.mouse.move(box.x + box.width * 0.2, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.4, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  const after = await Promise.all(['chart-load', 'chart-goodput', 'chart-backlog'].map(range));
  assert.ok(after[0][1] - after[0][0] < (before[1] - before[0]) / 2, `zoomed in: ${before} -> ${after[0]}`);
  assert.deepEqual(after[1], after[0], 'goodput follows the zoom');
  assert.deepEqual(after[2], after[0], 'backlog follows the zoom');
  // Sorting by "failed" puts the smallest first.
  await page.locator('#summary-table thead th', { hasText: 'failed' }).click();
  const failed = (await page.locator('#summary-table tbody tr td:nth-child(2)').allTextContents()).map(Number);
  assert.deepEqual(failed, [...failed].sort((a, b) => a - b), 'sorted ascending');
  assert.deepEqual(problems, [], 'no errors and no network requests');
  console.log(`report.html ok: ${rows} strategies, 3 charts`);
} finally {
  await browser.close();
}
