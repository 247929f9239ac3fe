// bench_viewer_frame.mjs WASM [FRAMES]: the browser viewer's frame time in
// headless Chromium (tests/support/chromium.mjs). Serves
// bench_viewer_frame.html (beside this file) and WASM (bench_viewer_frame.wasm
// of a Release build) from 127.0.0.1 on a port of the kernel's choice,
// cross-origin isolated (COOP and COEP headers: performance.now() then
// counts in 5 us steps, not 100 us), opens the page, waits for its figures
// (one frame a requestAnimationFrame: about 40 s at 60 Hz) and prints them.
// Exits 1, saying why, when the page fails or takes more than 5 minutes.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch } from '../../tests/support/chromium.mjs';

const [wasmPath, framesArg] = process.argv.slice(2);
if (!wasmPath) {
  console.error('usage: node bench_viewer_frame.mjs bench_viewer_frame.wasm [FRAMES]');
  process.exit(2);
}
const frames = Number(framesArg) || 2000;
const here = dirname(fileURLToPath(import.meta.url));
const files = {
  '/bench_viewer_frame.html': { type: 'text/html; charset=utf-8', bytes: readFileSync(join(here, 'bench_viewer_frame.html')) },
  '/bench_viewer_frame.wasm': { type: 'application/wasm', bytes: readFileSync(wasmPath) },
};
const server = createServer((req, res) => {
  const file = files[new URL(req.url, 'http://x').pathname];
  if (!file) { res.writeHead(404).end(); return; }
  res.writeHead(200, {
    'Content-Type': file.type, 'Cache-Control': 'no-store',
    'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp',
  }).end(file.bytes);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}/bench_viewer_frame.html#frames=${frames}`;

const ms = (s) => `mean ${s.mean.toFixed(3)} ms, p50 ${s.p50.toFixed(3)} ms, p99 ${s.p99.toFixed(3)} ms, max ${s.max.toFixed(3)} ms`;
let browser, rc = 0;
try {
  browser = await launch({ width: 1280, height: 720 });
  await browser.goto(url);
  // Polled once a second: each poll is a task on the page's main thread.
  const b = await browser.waitFor('window.bench && window.bench.done && window.bench', { timeoutMs: 300000, intervalMs: 1000, what: 'the page\'s figures' });
  if (b.error) throw new Error(`the page failed: ${b.error}`);
  const version = (b.agent.match(/Chrome\/([0-9.]+)/) || [])[1] || b.agent;
  console.log(`viewer frame in headless Chromium ${version} (bench_viewer_frame.wasm, clang-14 wasm32-wasi -O2): ` +
    `${b.live} live entities, 1280x720, ${b.frames} frames after ${b.warmup} warm-up, one a requestAnimationFrame (goal <= 4 ms)`);
  console.log(`  wasm call + putImageData: ${ms(b.total)}`);
  console.log(`  wasm call (cv_frame's drawing): ${ms(b.wasm)}`);
  console.log(`  putImageData: ${ms(b.put)}`);
  console.log(`  frames came every ${b.interval.mean.toFixed(2)} ms on average (${b.fps.toFixed(1)} fps), ` +
    `p99 ${b.interval.p99.toFixed(2)} ms, max ${b.interval.max.toFixed(2)} ms; performance.now() ` +
    `${b.isolated ? 'cross-origin isolated (5 us steps)' : 'not isolated (100 us steps)'}`);
  console.log(`  last frame's pixels: fnv1a ${b.hash}`);
} catch (e) {
  console.error(`bench_viewer_frame.mjs: ${e.message}`);
  if (browser) console.error(browser.console.slice(-10).join('\n'));
  rc = 1;
} finally {
  if (browser) await browser.close().catch(() => {});
  server.close();
}
process.exit(rc);
