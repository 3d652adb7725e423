// Loads a page in headless Chromium (Debian's, through puppeteer) and reports,
// as JSON on standard output, what a person would see of its pictures: for
// each <figure>, the inline <svg> or <img> it shows, its rendered size and
// box, whether the figure clips it, and every <text> of an inline SVG with its
// class, rendered length and box and whether it lies inside the picture; the
// elements that stick out of the page's width or of their <article> (a
// <pre>'s or an <svg>'s own content aside: they scroll or scale), and each
// <pre> of an <article> that scrolls sideways; with every
// request the page made, what the console said (Content-Security-Policy
// violations included), and a full-page screenshot.
//
//   node inspect.mjs PAGE.html SCREENSHOT.png [WIDTH]
//
// tests/browser_test.go runs it; CHROMIUM names the browser (default
// /usr/bin/chromium).
import { launch } from './browser.mjs';
import { pathToFileURL, fileURLToPath } from 'node:url';

const [page_, shot, width] = process.argv.slice(2);
const browser = await launch();
try {
  const page = await browser.newPage();
  await page.setViewport({ width: Number(width || 1100), height: 800 });
  const requests = [];
  const console_ = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('requestfailed', (r) => console_.push('request failed: ' + r.url() + ' (' + (r.failure()?.errorText || '') + ')'));
  page.on('console', (m) => console_.push(m.type() + ': ' + m.text()));
  page.on('pageerror', (e) => console_.push('page error: ' + e.message));
  const url = pathToFileURL(page_).href;
  await page.goto(url, { waitUntil: 'load' });
  const figures = await page.evaluate(() => {
    const out = [];
    const rect = (b) => ({ left: b.left, top: b.top, right: b.right, bottom: b.bottom });
    for (const fig of document.querySelectorAll('figure')) {
      const svg = fig.querySelector('svg');
      const img = fig.querySelector('img');
      const f = { id: fig.id || '', kind: svg ? 'svg' : img ? 'img' : 'none', width: 0, height: 0, texts: [] };
      const el = svg || img;
      if (el) {
        const r = el.getBoundingClientRect();
        f.width = r.width;
        f.height = r.height;
        f.box = rect(r);
        const fb = fig.getBoundingClientRect();
        f.clipped = fig.scrollWidth > fig.clientWidth + 1 || r.right > fb.right + 1 || r.right > document.documentElement.clientWidth + 1;
        if (img) f.loaded = img.complete && img.naturalWidth > 0;
      }
      if (svg) {
        const box = svg.getBoundingClientRect();
        for (const t of svg.querySelectorAll('text')) {
          const b = t.getBoundingClientRect();
          f.texts.push({
            text: t.textContent,
            class: t.getAttribute('class') || '',
            box: rect(b),
            length: t.getComputedTextLength(),
            inside: b.left >= box.left - 1 && b.right <= box.right + 1 && b.top >= box.top - 1 && b.bottom <= box.bottom + 1,
          });
        }
      }
      out.push(f);
    }
    return out;
  });
  const overflow = await page.evaluate(() => {
    const out = [];
    const width = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth > width + 1) {
      out.push('the page is ' + document.documentElement.scrollWidth + ' px wide in a ' + width + ' px window');
    }
    const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className && typeof el.className === 'string' ? '.' + el.className.split(' ').join('.') : '');
    for (const el of document.body.querySelectorAll('*')) {
      const holder = el.parentElement && el.parentElement.closest('pre, svg');
      if (holder) continue;
      const b = el.getBoundingClientRect();
      if (b.width === 0 && b.height === 0) continue;
      const card = el.parentElement && el.parentElement.closest('article');
      const limit = card ? card.getBoundingClientRect().right : width;
      if (b.right > limit + 1) {
        out.push(name(el) + ' ends at ' + Math.round(b.right) + ' px, past ' + (card ? name(card) + "'s edge" : "the window's") + ' at ' + Math.round(limit) + ' px');
      }
      if (card && el.tagName === 'PRE' && el.scrollWidth > el.clientWidth + 1) {
        out.push(name(el) + ' in ' + name(card) + ' scrolls sideways: ' + el.scrollWidth + ' px in ' + el.clientWidth);
      }
    }
    return out;
  });
  await page.screenshot({ path: shot, fullPage: true });
  process.stdout.write(JSON.stringify({ url, requests, console: console_, figures, overflow }) + '\n');
} finally {
  await browser.close();
}
