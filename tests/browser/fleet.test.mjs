// End-to-end test of a fleet's report.html in Debian's Chromium, headless:
// the map of each strategy's replicas is drawn (a canvas per strategy, cells
// of the colours replicas.png has), hovering a cell says what that replica
// held, a strategy toggle hides its map, and nothing is fetched. Usage:
// node fleet.test.mjs REPORT.html (a run of scenarios/fleet.toml).
import assert from 'node:assert/strict';
import { launch } from './browser.mjs';

const file = process.argv[2];
assert.ok(file, 'usage: node fleet.test.mjs REPORT.html');
const { browser, page, problems } = await launch();
try {
  await page.goto('file://' + file);
  const rows = await page.locator('#summary-table tbody tr').count();
  const maps = page.locator('#chart-fleet .fleet-map');
  assert.equal(await maps.count(), rows, 'a map per strategy');
  assert.equal(await page.locator('#chart-fleet .fleet-map canvas').count(), rows);
  // eject-all (the third strategy) has every replica out of the rotation
  // from about 25 s to 60 s of the 120 s run: a third of the way along, its
  // map is the grey of "out".
  const eject = page.locator('#chart-fleet .fleet-map[data-i="2"] canvas');
  await eject.scrollIntoViewIfNeeded();
  const pixel = await eject.evaluate((c) => {
    const g = c.getContext('2d');
    const d = g.getImageData(Math.round(c.width * 0.35), Math.round(c.height * 0.4), 1, 1).data;
    return [d[0], d[1], d[2]];
  });
  assert.deepEqual(pixel, [205, 205, 205], 'out of the rotation is grey');
  // no-ejection's map is never grey: its replicas are always in.
  const calm = await page.locator('#chart-fleet .fleet-map[data-i="0"] canvas').evaluate((c) => {
    const g = c.getContext('2d');
    const d = g.getImageData(0, 0, c.width, c.height).data;
    let grey = 0;
    for (let k = 0; k < d.length; k += 4) if (d[k] === 205 && d[k + 1] === 205 && d[k + 2] === 205) grey++;
    return grey;
  });
  assert.equal(calm, 0, 'no grey where no replica left the rotation');
  // Hovering a cell of replica 0 says what it held.
  const box = await eject.boundingBox();
  await page.mouse.move(box.x + box.width * 0.35, box.y + (box.height - 20) * 0.95);
  const tip = await page.locator('#chart-fleet .fleet-map[data-i="2"] .fleet-tip').innerText();
  assert.match(tip, /^replica 0, \d+\.\d s to \d+\.\d s: [\d.]+ requests held, in the rotation 0% of the time$/, tip);
  // Hiding a strategy hides its map.
  await page.locator('#toggles button[data-i="2"]').click();
  assert.equal(await page.locator('#chart-fleet .fleet-map[data-i="2"]').isHidden(), true);
  await page.setViewportSize({ width: 800, height: 900 });
  await page.waitForTimeout(200);
  assert.deepEqual(problems, [], 'no errors and no network requests');
  console.log(`fleet report ok: ${rows} maps`);
} finally {
  await browser.close();
}
