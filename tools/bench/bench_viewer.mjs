// bench_viewer.mjs EDGE PATH ACCESS_LOG CLIENT GAME RUNS AFTER_S: for
// bench_viewer.sh, a live broadcast's viewers on loopback, RUNS times each,
// taking turns (the broadcast's point between keyframes differs each time):
//   - the browser: a fresh headless Chromium (tests/support/chromium.mjs,
//     an empty profile and cache: nothing held from an earlier run) opens
//     EDGE/viewer.html#b=PATH&delay=3 and is watched (polled every 10 ms)
//     until window.cradleViewer.firstFrameMs is set. Its link to first
//     frame: from the navigation's start (performance.timeOrigin, the
//     page's clock) to its first step shown; also the page's own
//     firstFrameMs (from viewer.js's start) and the wall time from asking
//     Chromium to navigate to seeing the frame here;
//   - the native viewer: CLIENT --headless --watch EDGE+PATH --game GAME
//     --delay 3, from its start to its first step shown (its stderr line
//     whose HUD mode says how far behind it shows: client/src/watch.c).
// For both, also the time to playing without buffering (the HUD's banner
// gone: PLAYING). Either then watches AFTER_S seconds more. What each
// downloaded comes from the edge's access log (ACCESS_LOG, deploy/broadcast/
// edge.conf's format: "$msec $request_method $request_uri $status
// $upstream_cache_status $body_bytes_sent $request_time"): the lines logged
// from its start to its first step, by kind, and those of the AFTER_S
// seconds after, per second. One viewer at a time reads the edge, so its
// lines are its own. Prints a line a run, then the p50 and max of the runs;
// exits 1, saying why, when a viewer is not playing within 60 s.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch } from '../../tests/support/chromium.mjs';

const [edge, path, accessLog, client, game, runsArg, afterArg] = process.argv.slice(2);
if (!game) {
  console.error('usage: node bench_viewer.mjs EDGE PATH ACCESS_LOG CLIENT GAME [RUNS] [AFTER_S]');
  process.exit(2);
}
const runs = Number(runsArg) || 5, afterMs = (Number(afterArg) || 10) * 1000;
const FIRST_MS = 60000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const KINDS = ['page', 'twin', 'web', 'keyframe', 'fragments', 'sync', 'start', 'data', 'other'];
const KIND_NAMES = { twin: 'the twin (web/)', web: 'manifest and sounds (web/)' };

// twin: the twin's web/ name (its SHA-256), or '' when the viewer has none.
function kind(uri, twin) {
  const p = uri.split('?')[0];
  if (/^\/viewer\.(html|js|css)$/.test(p)) return 'page';
  if (!p.startsWith(path)) return 'other'; // favicon.ico
  const rest = p.slice(path.length);
  if (rest === 'sync') return 'sync';
  if (rest === 'start') return 'start';
  if (twin && rest === `web/${twin}`) return 'twin';
  return { 'web/': 'web', 'key/': 'keyframe', 'frag/': 'fragments', 'data/': 'data' }[rest.slice(0, rest.indexOf('/') + 1)] || 'other';
}

// The edge's lines logged in (from, to] (epoch ms), summed by kind. nginx
// logs a request when it ends, in ms; the viewer's own clock reads
// microseconds, so a line logged in the millisecond of `from` counts.
function downloads(from, to, twin = '') {
  const sum = { bytes: 0, requests: 0, misses: 0 };
  for (const k of KINDS) sum[k] = 0;
  for (const line of readFileSync(accessLog, 'utf8').split('\n')) {
    const f = line.split(' ');
    if (f.length < 7 || f[1] !== 'GET') continue;
    const at = Number(f[0]) * 1000;
    if (at < Math.floor(from) || at > to) continue;
    const bytes = Number(f[5]);
    sum[kind(f[2], twin)] += bytes;
    sum.bytes += bytes;
    sum.requests++;
    if (f[4] === 'MISS' || f[4] === 'EXPIRED') sum.misses++;
  }
  return sum;
}

// A first-time visitor: Chromium's disk cache and its compiled-code cache
// (wasm included) go under XDG_CACHE_HOME, which chromium.mjs leaves as it
// is (~/.cache, shared by every instance), so each run gets its own.
async function browserRun() {
  const cache = mkdtempSync(join(tmpdir(), 'cradle-bench-viewer-cache-'));
  process.env.XDG_CACHE_HOME = cache;
  let browser = null;
  try {
    browser = await launch({ width: 1280, height: 720 });
    delete process.env.XDG_CACHE_HOME;
    const asked = Date.now();
    await browser.goto(`${edge}/viewer.html#b=${path}&delay=3`);
    const v = await browser.waitFor(`(() => { const v = window.cradleViewer;
        return v && v.firstFrameMs !== null && { origin: performance.timeOrigin, started: v.started,
          firstFrameMs: v.firstFrameMs, wasm: v.wasm, wasmBytes: v.wasmBytes }; })()`,
      { timeoutMs: FIRST_MS, intervalMs: 10, what: 'the page\'s first frame' });
    const seen = Date.now();
    // Then playing and not buffering, as the native viewer's PLAYING (on the page's clock).
    const playing = await browser.waitFor(`(() => { const s = window.cradleViewer.status;
        return s && s.playing && !s.buffering && performance.now(); })()`,
      { timeoutMs: FIRST_MS, intervalMs: 10, what: 'the page playing, not buffering' });
    const first = v.origin + v.started + v.firstFrameMs; // epoch ms
    await sleep(first + afterMs - Date.now());
    const status = await browser.evaluate('window.cradleViewer.status');
    await sleep(300); // the edge logs the last requests
    return {
      viewer: 'browser', first_ms: v.started + v.firstFrameMs, playing_ms: playing, page_first_ms: v.firstFrameMs,
      goto_ms: seen - asked, start: downloads(v.origin, first, v.wasm), after: downloads(first, first + afterMs, v.wasm),
      twin_bytes: v.wasmBytes, hash_mismatches: status.hash_mismatches,
    };
  } finally {
    delete process.env.XDG_CACHE_HOME;
    if (browser) await browser.close();
    rmSync(cache, { recursive: true, force: true });
  }
}

// Its stderr says what its window's HUD would, a line a change: the mode
// says "N.N S BEHIND" once a step is shown (buffering or not), and the
// banner goes (": PLAYING") once it plays without waiting.
function nativeRun() {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(client, ['--headless', '--watch', `${edge}${path}`, '--game', game, '--delay', '3'],
      { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '', first = null, playing = null, timer = null;
    const deadline = setTimeout(() => { child.kill('SIGTERM'); }, FIRST_MS);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d) => {
      err += d;
      if (first === null && /[0-9] S BEHIND/.test(err)) first = Date.now();
      if (playing === null && /: PLAYING\b/.test(err)) {
        playing = Date.now();
        clearTimeout(deadline);
        timer = setTimeout(() => child.kill('SIGTERM'), afterMs); // it prints its summary on stdout
      }
    });
    child.on('error', reject);
    child.on('exit', async () => {
      clearTimeout(deadline);
      clearTimeout(timer);
      if (first === null || playing === null)
        return reject(new Error(`the native viewer was not playing within ${FIRST_MS / 1000} s:\n${err}`));
      await sleep(300);
      const summary = (out.match(/\{.*"event":"watched".*\}/) || [])[0];
      resolve({
        viewer: 'native', first_ms: first - started, playing_ms: playing - started, start: downloads(started, first),
        after: downloads(first, first + afterMs), hash_mismatches: summary ? JSON.parse(summary).hash_mismatches : '?',
      });
    });
  });
}

const median = (xs) => { const t = [...xs].sort((a, b) => a - b); return t[t.length >> 1]; };
const max = (xs) => Math.max(...xs);
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
const perSecond = (r) => r.after.bytes / (afterMs / 1000);
const ms = (xs) => `p50 ${median(xs).toFixed(0)} ms, max ${max(xs).toFixed(0)} ms`;

function runLine(r) {
  const from = r.viewer === 'browser' ? 'the navigation\'s start' : 'its start';
  const page = r.viewer === 'browser'
    ? ` (the page's own firstFrameMs ${r.page_first_ms.toFixed(0)} ms, goto to seen ${r.goto_ms} ms)` : '';
  return `  run ${r.run}, ${r.viewer}: first step shown ${r.first_ms.toFixed(0)} ms after ${from}${page}, playing ` +
    `${r.playing_ms.toFixed(0)} ms; by the first step ${kib(r.start.bytes)} in ${r.start.requests} requests ` +
    `(${r.start.misses} missed the edge's cache); then ${(perSecond(r) / 1024).toFixed(2)} KiB/s; ` +
    `hash mismatches ${r.hash_mismatches}`;
}

// The p50 of each kind's bytes over the runs, and of the total.
function startLine(rs) {
  const kinds = KINDS.filter((k) => rs.some((r) => r.start[k] > 0))
    .map((k) => `${KIND_NAMES[k] || k} ${kib(median(rs.map((r) => r.start[k])))}`);
  return `${kinds.join(', ')}; total ${kib(median(rs.map((r) => r.start.bytes)))} ` +
    `in ${median(rs.map((r) => r.start.requests))} requests`;
}

try {
  const all = [];
  for (let i = 0; i < runs; i++) {
    for (const run of [browserRun, nativeRun]) {
      const r = { run: i + 1, ...(await run()) };
      console.log(runLine(r));
      all.push(r);
    }
  }
  const browser = all.filter((r) => r.viewer === 'browser'), native = all.filter((r) => r.viewer === 'native');
  const times = (rs, what) => `${what} ${ms(rs.map((r) => r.first_ms))}; playing without buffering ${ms(rs.map((r) => r.playing_ms))}`;
  console.log(`link to first frame on loopback (goal <= 2 s), ${runs} runs each:`);
  console.log(`  browser (viewer.html, a fresh Chromium each run): ${times(browser, 'the navigation\'s start to the first step shown')}` +
    `; the page's own firstFrameMs ${ms(browser.map((r) => r.page_first_ms))}; goto to seen ${ms(browser.map((r) => r.goto_ms))}`);
  console.log(`  native (cradle-client --headless --watch --delay 3, the reference): ${times(native, 'its start to the first step shown')}`);
  console.log('what a viewer downloads by its first step (p50 of each over the runs; the edge\'s log, bodies only):');
  console.log(`  browser: ${startLine(browser)}`);
  console.log(`  native:  ${startLine(native)}`);
  console.log(`and per second over the next ${afterMs / 1000} s (p50): browser ${(median(browser.map(perSecond)) / 1024).toFixed(2)} KiB/s, ` +
    `native ${(median(native.map(perSecond)) / 1024).toFixed(2)} KiB/s`);
} catch (e) {
  console.error(`bench_viewer.mjs: ${e.message}`);
  process.exit(1);
}
process.exit(0);
