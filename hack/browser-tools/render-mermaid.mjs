// Parses and draws Mermaid charts with Mermaid's own code (the mermaid
// package's parse and render, as GitHub runs them) in headless Chromium
// (Debian's, through puppeteer): one page, Mermaid loaded once, every chart
// in turn, so that a test with many charts does not start a browser or load
// Mermaid per chart as mmdc does.
//
//   node render-mermaid.mjs CHARTS.json > RESULTS.json
//
// CHARTS.json is a JSON array of chart sources; the output an array of
// {svg} or {error} in the same order. CHROMIUM names the browser.
import { launch } from './browser.mjs';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const charts = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const browser = await launch();
try {
  const page = await browser.newPage();
  await page.setContent('<!DOCTYPE html><html><body><div id="charts"></div></body></html>');
  await page.addScriptTag({ path: require.resolve('mermaid/dist/mermaid.min.js') });
  const results = await page.evaluate(async (charts) => {
    // GitHub's settings: strict security (no click callbacks, labels sanitized).
    mermaid.initialize({ startOnLoad: false, securityLevel: 'strict' });
    const out = [];
    for (let i = 0; i < charts.length; i++) {
      try {
        await mermaid.parse(charts[i]);
        const { svg } = await mermaid.render('chart' + (i + 1), charts[i], document.getElementById('charts'));
        out.push({ svg });
      } catch (e) {
        out.push({ error: String((e && e.message) || e) });
      }
    }
    return out;
  }, charts);
  process.stdout.write(JSON.stringify(results) + '\n');
} finally {
  await browser.close();
}
