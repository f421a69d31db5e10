// End-to-end test of a sweep's report.html in headless Chromium: no request
// leaves the page, the summary table has a row per point and strategy, each
// charted figure is drawn (a line chart for one parameter, a grid of cells
// per strategy for two), and hiding a strategy hides its series or grid.
// Usage: node sweep.test.mjs REPORT.html line|map
import assert from 'node:assert/strict';
import { launch } from './browser.mjs';

const [file, kind] = process.argv.slice(2);
assert.ok(file && (kind === 'line' || kind === 'map'), 'usage: node sweep.test.mjs REPORT.html line|map');
const { browser, page, problems } = await launch();
try {
  await page.goto('file://' + file);
  const rows = await page.locator('#summary-table tbody tr').count();
  assert.ok(rows >= 2, 'the summary table has rows');
  const charts = await page.locator('#sweep-charts > .chart').count();
  assert.ok(charts >= 1, 'at least one figure is charted');
  const drawn = await page.locator('#sweep-charts canvas').count();
  const grids = await page.locator('#sweep-charts .heatmap').count();
  if (kind === 'line') {
    assert.ok(drawn >= 1, `line charts are drawn (${drawn})`);
    assert.equal(grids, 0);
  } else {
    assert.ok(grids >= 2, `one grid per strategy and figure (${grids})`);
    const cells = await page.locator('#sweep-charts .heatmap td').allTextContents();
    assert.ok(cells.some((c) => /^-?\d/.test(c) || c === 'never'), 'cells hold values');
    await page.locator('#toggles button[data-i="0"]').click();
    const hidden = await page.locator('#sweep-charts .heatmap[data-i="0"][hidden]').count();
    assert.equal(hidden, charts, 'the first strategy\'s grids are hidden');
  }
  assert.equal(await page.locator('#chart-timeline canvas').count(), 1, 'the timeline is drawn');
  assert.deepEqual(problems, [], 'no errors and no network requests');
  console.log(`sweep report.html ok (${kind}): ${rows} rows, ${charts} figures`);
} finally {
  await browser.close();
}
