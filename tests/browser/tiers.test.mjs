// report.html of a call chain in Debian's Chromium, headless: the tiers
// table (a row per strategy and tier, sortable, headings that say what they
// mean) and the chart of each tier's attempts (a panel per strategy, a line
// per tier, values on hover, hidden with its strategy).
// Usage: node tiers.test.mjs REPORT.html
import assert from 'node:assert/strict';
import { launch } from './browser.mjs';

const file = process.argv[2];
assert.ok(file, 'usage: node tiers.test.mjs REPORT.html');
const { browser, page, problems } = await launch();
try {
  await page.goto('file://' + file);
  const strategies = await page.locator('#summary-table tbody tr').count();
  const rows = page.locator('#tiers-table tbody tr');
  assert.equal(await rows.count(), strategies * 3, 'a row per strategy and tier');
  const heads = await page.locator('#tiers-table thead th').allTextContents();
  assert.ok(heads.includes('service') && heads.includes('attempts'), `${heads}`);
  const title = await page.locator('#tiers-table thead th', { hasText: 'attempts' }).first().getAttribute('title');
  assert.ok(title && title.length > 10, 'a heading says what it means');
  const services = await page.locator('#tiers-table tbody tr td:nth-child(3)').allTextContents();
  assert.deepEqual([...new Set(services)], ['frontend', 'backend', 'database']);
  // The chart: one panel per strategy, three tiers in each.
  const heading = await page.locator('#chart-tiers h3').innerText();
  assert.match(heading, /solid: frontend, dashed: backend, dotted: database/, heading);
  assert.equal(await page.locator('#chart-tiers .panel canvas').count(), strategies);
  const series = await page.locator('#chart-tiers .panel[data-i="0"] .u-legend .u-series').count();
  assert.equal(series, 4, 'time and three tiers in the legend');
  const over = page.locator('#chart-tiers .panel[data-i="0"] .u-over');
  await over.scrollIntoViewIfNeeded();
  const box = await over.boundingBox();
  await page.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2);
  const values = await page.locator('#chart-tiers .panel[data-i="0"] .u-legend .u-value').allTextContents();
  assert.ok(values.filter((v) => /^\d/.test(v)).length >= 4, `hover shows each tier's value: ${values}`);
  // Hiding a strategy hides its tiers' panel too.
  await page.locator('#toggles button[data-i="0"]').click();
  assert.equal(await page.locator('#chart-tiers .panel[data-i="0"]').isHidden(), true);
  // Sorting the tiers table by attempts puts the fewest first.
  await page.locator('#tiers-table thead th', { hasText: /^attempts$/ }).click();
  const col = heads.indexOf('attempts') + 1;
  const attempts = (await page.locator(`#tiers-table tbody tr td:nth-child(${col})`).allTextContents()).map(Number);
  assert.deepEqual(attempts, [...attempts].sort((a, b) => a - b), 'sorted ascending');
  assert.deepEqual(problems, [], 'no errors and no network requests');
  console.log(`report.html tiers ok: ${strategies} strategies x 3 tiers`);
} finally {
  await browser.close();
}
