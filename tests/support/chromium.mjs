// chromium.mjs - drive Debian's headless Chromium over the Chrome DevTools
// Protocol (CDP) for browser tests. Dependency-free Node 20 ES module.
//
// Transport is --remote-debugging-pipe, not websockets: node 20 has no
// WebSocket client and the project takes no npm packages. With the pipe,
// Chromium reads commands from its fd 3 and writes responses/events to its
// fd 4; every message is one JSON object terminated by a NUL byte.
//
//   const b = await launch({ width, height, log });
//   await b.goto(url); await b.waitFor('document.title === "ok"');
//   await b.evaluate(expr); await b.screenshot(path); await b.close();

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const short = (s) => (s.length > 120 ? `${s.slice(0, 117)}...` : s);

// Settle like `promise`, or reject with error() after `ms` milliseconds.
function deadline(promise, ms, error) {
  let timer;
  const expire = new Promise((_, reject) => { timer = setTimeout(() => reject(error()), ms); });
  return Promise.race([promise, expire]).finally(() => clearTimeout(timer));
}

// Pids of every process of one browser instance (zygotes, renderers, gpu...):
// they all carry its --user-data-dir on their command line.
function instancePids(userDataDir) {
  const pids = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try { if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(userDataDir)) pids.push(+pid); } catch {}
  }
  return pids;
}

export async function launch({ width = 960, height = 720, log } = {}) {
  const userDataDir = mkdtempSync(join(tmpdir(), 'cradle-chromium-'));
  const args = [
    '--headless=new', '--remote-debugging-pipe', '--no-sandbox', '--disable-gpu',
    '--use-gl=swiftshader', '--enable-unsafe-swiftshader', '--no-first-run',
    '--no-default-browser-check', '--disable-extensions',
    '--disable-background-networking', '--disable-background-timer-throttling',
    '--disable-renderer-backgrounding', '--disable-backgrounding-occluded-windows',
    '--autoplay-policy=no-user-gesture-required', '--mute-audio',
    `--user-data-dir=${userDataDir}`, `--window-size=${width},${height}`, 'about:blank',
  ];
  // XDG_CONFIG_HOME keeps crashpad's database (and its handler processes'
  // command lines) inside the profile rather than in ~/.config/chromium;
  // XDG_CACHE_HOME the HTTP and compiled-code caches, so no launch sees
  // another's (a page's downloads are what they are for a new visitor).
  const env = { ...process.env, XDG_CONFIG_HOME: userDataDir, XDG_CACHE_HOME: userDataDir };
  const child = spawn(CHROMIUM, args, { env, stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
  const killAll = () => {
    for (const pid of [child.pid, ...instancePids(userDataDir)]) { try { process.kill(pid, 'SIGKILL'); } catch {} }
  };
  const killOnExit = () => { killAll(); try { rmSync(userDataDir, { recursive: true, force: true }); } catch {} };
  process.on('exit', killOnExit);

  let stderr = '';
  child.stderr.on('data', (d) => { stderr = (stderr + d).slice(-16000); });
  // Last stderr lines, minus the harmless dbus noise of a container.
  const stderrTail = () => stderr.split('\n').filter((l) => l.trim() && !/:ERROR:dbus\//.test(l)).slice(-15).join('\n');

  const pending = new Map(); // id -> {resolve, reject, method}
  const listeners = new Set(); // fn(msg) for every event
  let nextId = 1;
  let exited = null; // Error once chromium is gone
  const exitPromise = new Promise((resolve) => {
    const gone = (why) => {
      if (exited) return;
      exited = new Error(`chromium ${why}\n${stderrTail()}`);
      for (const p of pending.values()) p.reject(new Error(`${p.method}: ${exited.message}`));
      pending.clear();
      for (const fn of [...listeners]) fn({ method: 'exit' }); // wake event waiters
      resolve();
    };
    child.on('exit', (code, signal) => gone(`exited (code ${code}, signal ${signal})`));
    child.on('error', (e) => gone(`failed: ${e.message}`)); // e.g. spawn ENOENT
  });

  // Read NUL-terminated JSON messages from fd 4.
  let buf = '';
  child.stdio[4].setEncoding('utf8');
  child.stdio[4].on('data', (chunk) => {
    buf += chunk;
    let end;
    while ((end = buf.indexOf('\0')) >= 0) {
      const msg = JSON.parse(buf.slice(0, end));
      buf = buf.slice(end + 1);
      if (msg.id !== undefined) {
        const p = pending.get(msg.id);
        if (!p) continue;
        pending.delete(msg.id);
        if (msg.error) p.reject(new Error(`${p.method}: ${msg.error.message} (${msg.error.code})`));
        else p.resolve(msg.result);
      } else {
        for (const fn of [...listeners]) fn(msg);
      }
    }
  });
  child.stdio[3].on('error', () => {}); // EPIPE after exit surfaces via 'exit'
  child.stdio[4].on('error', () => {});

  const browser = { console: [], process: child, userDataDir, sessionId: null };

  browser.send = (method, params = {}, { session = true } = {}) => {
    if (exited) return Promise.reject(new Error(`${method}: ${exited.message}`));
    const id = nextId++;
    const msg = { id, method, params };
    if (session && browser.sessionId) msg.sessionId = browser.sessionId;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject, method });
      child.stdio[3].write(JSON.stringify(msg) + '\0');
    });
  };

  const addLine = (line) => {
    browser.console.push(line);
    if (typeof log === 'function') log(line);
  };
  listeners.add((msg) => {
    if (msg.method === 'Runtime.consoleAPICalled') {
      const text = msg.params.args.map((a) => ('value' in a ? String(a.value) : a.description ?? a.type)).join(' ');
      addLine(`console.${msg.params.type}: ${text}`);
    } else if (msg.method === 'Runtime.exceptionThrown') {
      const d = msg.params.exceptionDetails;
      addLine(`exception: ${d.exception?.description ?? d.text} (${d.url ?? ''}:${d.lineNumber}:${d.columnNumber})`);
    } else if (msg.method === 'Log.entryAdded') {
      const e = msg.params.entry;
      addLine(`log.${e.level}: ${e.text}${e.url ? ` (${e.url})` : ''}`);
    }
  });

  // Navigate and wait for the page's load event, all within 30 s.
  browser.goto = async (url) => {
    let onEvent;
    const loaded = new Promise((resolve, reject) => {
      onEvent = (msg) => {
        if (msg.method === 'exit') reject(exited);
        else if (msg.method === 'Page.loadEventFired' && msg.sessionId === browser.sessionId) resolve();
      };
      listeners.add(onEvent);
    });
    const navigate = browser.send('Page.navigate', { url }).then((r) => {
      if (r.errorText) throw new Error(`goto: navigation to ${short(url)} failed: ${r.errorText}`);
      return loaded;
    });
    try {
      await deadline(navigate, 30000, () => new Error(`goto: timed out after 30000 ms waiting for the load of ${short(url)}`));
    } finally {
      listeners.delete(onEvent);
      loaded.catch(() => {});
    }
  };

  browser.evaluate = async (expression) => {
    const r = await browser.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true });
    if (r.exceptionDetails) {
      const d = r.exceptionDetails;
      throw new Error(`evaluate(${short(expression)}) threw: ${d.exception?.description ?? d.text}`);
    }
    return r.result.value;
  };

  browser.waitFor = async (expression, { timeoutMs = 30000, intervalMs = 100, what } = {}) => {
    const end = Date.now() + timeoutMs;
    let last;
    const fail = () => new Error(`timed out after ${timeoutMs} ms waiting for ${what || expression}; ` +
      `last value: ${JSON.stringify(last)}\nlast console lines:\n${browser.console.slice(-20).join('\n') || '(none)'}`);
    for (;;) {
      // A hung evaluation (e.g. a never-settling promise) counts against the deadline too.
      const left = Math.max(0, end - Date.now());
      last = await deadline(browser.evaluate(expression), left + 250, fail);
      if (last) return last;
      if (Date.now() >= end) throw fail();
      await sleep(Math.min(intervalMs, Math.max(0, end - Date.now())));
    }
  };

  browser.screenshot = async (path, { clip } = {}) => {
    const params = { format: 'png' };
    if (clip) params.clip = { scale: 1, ...clip };
    const { data } = await browser.send('Page.captureScreenshot', params);
    writeFileSync(path, Buffer.from(data, 'base64'));
  };

  let closing = null;
  browser.close = () => (closing ??= (async () => {
    const pids = instancePids(userDataDir);
    if (!exited) await deadline(browser.send('Browser.close', {}, { session: false }), 5000, Error).catch(() => {});
    const timer = setTimeout(killAll, 5000);
    await exitPromise;
    clearTimeout(timer);
    // Helper processes outlive the browser briefly (as zombies until init
    // reaps them): wait, with a deadline, so no chromium process is left
    // behind. Live stragglers (cmdline still ours; zombies have none) are killed.
    for (const end = Date.now() + 5000; Date.now() < end; await sleep(50)) {
      if (!pids.some((pid) => existsSync(`/proc/${pid}`))) break;
      for (const pid of instancePids(userDataDir)) { try { process.kill(pid, 'SIGKILL'); } catch {} }
    }
    process.off('exit', killOnExit);
    rmSync(userDataDir, { recursive: true, force: true });
  })());

  try {
    const { targetId } = await browser.send('Target.createTarget', { url: 'about:blank' }, { session: false });
    const { sessionId } = await browser.send('Target.attachToTarget', { targetId, flatten: true }, { session: false });
    browser.sessionId = sessionId;
    await Promise.all(['Runtime.enable', 'Page.enable', 'Log.enable'].map((m) => browser.send(m)));
  } catch (e) {
    await browser.close();
    throw e;
  }
  return browser;
}

// Self-test: node tests/support/chromium.mjs
if (import.meta.url === `file://${process.argv[1]}`) {
  const html = `<canvas id=c width=200 height=100></canvas><script>
    const g = document.getElementById('c').getContext('2d');
    g.fillStyle = 'red'; g.fillRect(10, 10, 180, 80);
    console.log('self-test page loaded');
    setTimeout(() => { document.title = 'ok'; }, 200);</script>`;
  let browser;
  try {
    browser = await launch();
    await browser.goto('data:text/html,' + encodeURIComponent(html));
    await browser.waitFor("document.title === 'ok'", { timeoutMs: 10000, what: 'title ok' });
    const png = '/tmp/chromium_selftest.png';
    await browser.screenshot(png, { clip: { x: 0, y: 0, width: 220, height: 120 } });
    // Check the screenshot really shows the red rectangle: decode it in the page.
    const src = `data:image/png;base64,${readFileSync(png).toString('base64')}`;
    const pixel = await browser.evaluate(`new Promise((resolve, reject) => {
      const img = new Image();
      img.onload = () => {
        const c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
        const g = c.getContext('2d'); g.drawImage(img, 0, 0);
        resolve([img.width, img.height, ...g.getImageData(100, 50, 1, 1).data]);
      };
      img.onerror = () => reject(new Error('screenshot is not a valid PNG'));
      img.src = ${JSON.stringify(src)};
    })`);
    if (JSON.stringify(pixel) !== '[220,120,255,0,0,255]') throw new Error(`unexpected screenshot pixel ${pixel}`);
    await browser.close();
    console.log('chromium.mjs: self-test passed');
  } catch (e) {
    console.error('chromium.mjs: self-test FAILED:', e);
    if (browser) await browser.close().catch(() => {});
    process.exit(1);
  }
}
