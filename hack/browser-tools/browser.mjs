// launch starts the Chromium the browser tests use (puppeteer.json: Debian's,
// with the flags this machine's closed network needs; CHROMIUM overrides the
// executable) with a profile of its own, for inspect.mjs and render-mermaid.mjs.
import puppeteer from 'puppeteer';
import { readFileSync } from 'node:fs';

export async function launch() {
  const config = JSON.parse(readFileSync(new URL('puppeteer.json', import.meta.url)));
  return puppeteer.launch({
    executablePath: process.env.CHROMIUM || config.executablePath,
    args: [...config.args, '--user-data-dir=' + (process.env.CHROMIUM_PROFILE || '/tmp/flipflop-chromium-' + process.pid)],
    headless: true,
  });
}
