// Parses and draws Mermaid charts with Mermaid's own code (the mermaid
// package's parse and render, as GitHub runs them) in headless Chromium
// (Debian's, through puppeteer): one page, Mermaid loaded once, every chart
// in turn, so that a test with many charts does not start a browser or load
// Mermaid per chart as mmdc does.
//
//   node render-mermaid.mjs CHARTS.json > RESULTS.json
//
// CHARTS.json is a JSON array of chart sources; the output an array of
// {svg, labels, nodes} or {error} in the same order: labels are the edge
// labels with text, each with its box as drawn in the page; nodes each node's
// id (flipflop's: s1, a1, p1) and box. CHROMIUM names the browser.
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
        // Drawn in the page, to measure what Mermaid laid out.
        const holder = document.createElement('div');
        holder.innerHTML = svg;
        document.body.appendChild(holder);
        const box = (el) => {
          const b = el.getBoundingClientRect();
          return { left: b.left, top: b.top, right: b.right, bottom: b.bottom };
        };
        const labels = [];
        for (const l of holder.querySelectorAll('g.edgeLabel')) {
          const b = l.getBoundingClientRect();
          if (l.textContent.trim() !== '' && b.width > 0 && b.height > 0) labels.push({ text: l.textContent, ...box(l) });
        }
        const nodes = [];
        for (const n of holder.querySelectorAll('g.node')) {
          const m = /-flowchart-([a-z][0-9]+)-[0-9]+$/.exec(n.id);
          if (m) nodes.push({ id: m[1], ...box(n) });
        }
        holder.remove();
        out.push({ svg, labels, nodes });
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
