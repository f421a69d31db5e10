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
  assert.deepEqual(heads.slice(0, 3), ['strategy', 'failed', 'recovery (s)']);
  // What this run shows, written from the run's figures, at the top.
  const takeaway = await page.locator('#takeaway').innerText();
  assert.match(takeaway, /What this run shows[\s\S]*Back to normal soonest/, takeaway);
  // Three figures as small multiples: a panel with a uPlot canvas per strategy.
  const figs = ['chart-load', 'chart-goodput', 'chart-backlog'];
  for (const id of figs) {
    assert.equal(await page.locator(`#${id} .panel canvas`).count(), rows, `${id}: a panel per strategy`);
  }
  const strategies = await page.locator('#toggles button[data-i]').count();
  assert.equal(strategies, rows, 'one toggle per strategy');
  // Hover the middle of the first load panel: its legend shows numbers, not dashes.
  const over = page.locator('#chart-load .panel[data-i="1"] .u-over');
  await over.scrollIntoViewIfNeeded();
  const box = await over.boundingBox();
  await page.mouse.move(box.x + box.width * 0.25, box.y + box.height / 2);
  const legend = await page.locator('#chart-load .panel[data-i="1"] .u-legend .u-value').allTextContents();
  assert.ok(legend.some((v) => /^\d/.test(v)), `hover shows values: ${legend}`);
  // Hide the first strategy: its panel is hidden in every figure.
  await page.locator('#toggles button[data-i="0"]').click();
  assert.equal(await page.locator('#toggles button[data-i="0"]').getAttribute('aria-pressed'), 'false');
  for (const id of figs) {
    assert.equal(await page.locator(`#${id} .panel[data-i="0"]`).isHidden(), true, `${id}: hidden`);
  }
  // The panels of a figure share one y scale (the largest value, with room).
  const ymax = await page.locator('#chart-load').evaluate((el) => +el.dataset.ymax);
  assert.ok(ymax > 0, 'the load figure has a scale');
  // Drag to zoom on a load panel: every figure's time range follows.
  const range = (id) => page.locator('#' + id).evaluate((el) => [+el.dataset.xmin, +el.dataset.xmax]);
  const before = await range('chart-goodput');
  await over.scrollIntoViewIfNeeded();
  const box2 = await over.boundingBox();
  await page.mouse.move(box2.x + box2.width * 0.2, box2.y + box2.height / 2);
  await page.mouse.down();
  await page.mouse.move(box2.x + box2.width * 0.4, box2.y + box2.height / 2, { steps: 5 });
  await page.mouse.up();
  const after = await Promise.all(figs.map(range));
  assert.ok(after[0][1] - after[0][0] < (before[1] - before[0]) / 2, `zoomed in: ${before} -> ${after[0]}`);
  assert.deepEqual(after[1], after[0], 'goodput follows the zoom');
  assert.deepEqual(after[2], after[0], 'the backlog follows the zoom');
  // Resizing the window redraws every chart without an error.
  await page.setViewportSize({ width: 900, height: 900 });
  await page.waitForTimeout(200);
  // Sorting by "failed" puts the smallest first.
  await page.locator('#summary-table thead th', { hasText: 'failed' }).click();
  const failed = (await page.locator('#summary-table tbody tr td:nth-child(2)').allTextContents()).map(Number);
  assert.deepEqual(failed, [...failed].sort((a, b) => a - b), 'sorted ascending');
  assert.deepEqual(problems, [], 'no errors and no network requests');
  console.log(`report.html ok: ${rows} strategies, 3 figures of ${rows} panels`);
} finally {
  await browser.close();
}
