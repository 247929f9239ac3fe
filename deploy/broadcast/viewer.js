// viewer.js: a Cradle broadcast in the browser. The page fetches; the game's
// WebAssembly twin checks and plays (client/web/viewer.c: the native replay
// driver, broadcast checks and software renderer, compiled for wasm32-wasi).
//
//   viewer.html#b=<broadcast URL>[&delay=<s>][&key=<64 hex>][&hud=0]
//
// b is the broadcast's base URL (absolute, or relative to this page), the
// one cradle-server --broadcast uploads to and the edge serves. delay: how
// far behind live to play (2..600 s, default 6). key: the server's signing
// key (cradle-keys pub server.key --sign); with it every fragment block and
// keyframe must be signed by that key.
//
// What this file trusts: nothing it fetches. The sync document names, for
// each build the session runs, a manifest under web/ named by its SHA-256;
// the manifest names the twin and the game's sounds the same way, and every
// one of them is checked against its name before use. A twin whose custom
// section "cradle_build" or whose contract names another build than the one
// announced is refused with both ids. The documents of the broadcast itself
// (sync, start, keyframes, fragments, data files) go into the twin
// unparsed: it checks them exactly as cradle-client --watch does, and
// nothing it could not verify is ever stepped or shown.
'use strict';

const WANT = { WAIT: 0, START: 1, SYNC: 2, FRAGMENT: 3, KEYFRAME: 4, DATA: 5, DONE: 16 };
const WAIT_MS = 50;            // a WAIT asks again this much later (the twin knows the poll period)
const MAX_STEPS_A_FRAME = 4096; // catching up from a keyframe runs many steps in one frame
const REFUSALS_SHOWN = 8;

const page = {
  phase: 'starting',         // starting, loading, watching, ended, failed
  error: '',                 // why the page stopped (failed)
  refusals: [],              // [{at, what}], newest last: what the twin or the page refused
  fetched: 0,                // bytes fetched (documents, twin, sounds)
  requests: 0,
  started: performance.now(),
  firstFrameMs: null,        // from the page's start to the first step shown
  build: '', wasm: '', wasmBytes: 0,
  frames: 0, fps: 0,
  handoffs: 0,               // reloads followed: twins handed the viewer to the next
  handingOff: false,
  frameMs: 0,                // the last frame's work: advance, draw, blit
  status: null,              // the twin's own (cv_status)
};
window.cradleViewer = page;

const $ = (id) => document.getElementById(id);

function refuse(what) {
  page.refusals.push({ at: new Date().toISOString(), what });
  if (page.refusals.length > 64) page.refusals.shift();
  showRefusals();
}

function fail(why) {
  page.phase = 'failed';
  page.error = why;
  $('state').textContent = why;
  $('state').className = 'bad';
  refuse(why);
}

function showRefusals() {
  const list = $('refusals');
  list.replaceChildren(...page.refusals.slice(-REFUSALS_SHOWN).map((r) => {
    const li = document.createElement('li');
    li.textContent = `${r.at.slice(11, 19)} ${r.what}`;
    return li;
  }));
  $('refused-count').textContent = String(page.refusals.length);
}

// ---- the parameters ---------------------------------------------------------

function parameters() {
  const p = new URLSearchParams(location.hash.slice(1));
  const b = p.get('b');
  if (!b) throw new Error('no broadcast: open viewer.html#b=<the broadcast URL>');
  const base = new URL(b.endsWith('/') ? b : b + '/', location.href);
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error(`b=${b}: a broadcast is http or https`);
  const delay = p.has('delay') ? Number(p.get('delay')) : 6;
  if (!Number.isInteger(delay) || delay < 2 || delay > 600) throw new Error(`delay=${p.get('delay')}: 2..600 seconds`);
  const key = p.get('key');
  if (key !== null && !/^[0-9a-f]{64}$/.test(key)) throw new Error('key: 64 lowercase hex digits (cradle-keys pub server.key --sign)');
  return { base, delay, key, hud: p.get('hud') !== '0' };
}

// ---- fetching ---------------------------------------------------------------

async function get(url, { cache = 'default', max = 64 << 20 } = {}) {
  page.requests++;
  const response = await fetch(url, { cache });
  if (!response.ok) throw new Error(`GET ${url}: HTTP ${response.status}`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (bytes.length > max) throw new Error(`GET ${url}: more than ${max} bytes`);
  page.fetched += bytes.length;
  return bytes;
}

const hex = (buffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, '0')).join('');

// A web/ file: fetched and checked against the SHA-256 it is named by.
async function getAddressed(base, sha256, bytes) {
  const data = await get(new URL(`web/${sha256}`, base));
  const digest = hex(await crypto.subtle.digest('SHA-256', data));
  if (digest !== sha256) throw new Error(`web/${sha256}: its bytes hash to ${digest}`);
  if (bytes !== undefined && data.length !== bytes) throw new Error(`web/${sha256}: ${data.length} bytes, the manifest says ${bytes}`);
  return data;
}

// ---- the manifest -----------------------------------------------------------

const isHex64 = (s) => typeof s === 'string' && /^[0-9a-f]{64}$/.test(s);
const isCount = (n) => Number.isInteger(n) && n >= 0 && n <= 2 ** 31;

function checkManifest(m, game, build) {
  const fields = ['cradle_web', 'game', 'build', 'wasm', 'sounds'];
  if (typeof m !== 'object' || m === null || Array.isArray(m)) throw new Error('manifest: not a JSON object');
  for (const k of Object.keys(m)) if (!fields.includes(k)) throw new Error(`manifest: unknown field "${k}"`);
  for (const k of fields) if (!(k in m)) throw new Error(`manifest: no "${k}"`);
  if (m.cradle_web !== 1) throw new Error(`manifest: version ${m.cradle_web}, this page reads version 1`);
  if (m.game !== game) throw new Error(`manifest: game "${m.game}", the broadcast's is "${game}"`);
  if (m.build !== build) throw new Error(`manifest: build "${m.build}", the sync document names "${build}"`);
  if (!m.wasm || !isHex64(m.wasm.sha256) || !isCount(m.wasm.bytes)) throw new Error('manifest: "wasm" must be {"sha256":<64 hex>,"bytes":N}');
  if (!Array.isArray(m.sounds) || m.sounds.length > 256) throw new Error('manifest: "sounds" must be a list of at most 256');
  for (const s of m.sounds) {
    if (typeof s !== 'object' || s === null || typeof s.name !== 'string' || !(s.sha256 === null || isHex64(s.sha256)) || !isCount(s.bytes))
      throw new Error('manifest: a sound must be {"name":..,"sha256":<64 hex>|null,"bytes":N}');
  }
  return m;
}

// ---- the twin ---------------------------------------------------------------

// WASI for a module that needs next to nothing of it: its clock, random
// bytes (libsodium asks once), and stderr for its warnings. Every other
// call answers ENOSYS: the twin opens no file.
function wasi(memory) {
  const ENOSYS = 52, EBADF = 8;
  const view = () => new DataView(memory().buffer);
  const text = new TextDecoder();
  let line = '';
  const calls = {
    fd_write(fd, iovs, count, written) {
      if (fd !== 1 && fd !== 2) return EBADF;
      const v = view();
      let n = 0;
      for (let i = 0; i < count; i++) {
        const ptr = v.getUint32(iovs + 8 * i, true), len = v.getUint32(iovs + 8 * i + 4, true);
        line += text.decode(new Uint8Array(memory().buffer, ptr, len));
        n += len;
      }
      let nl;
      while ((nl = line.indexOf('\n')) >= 0) {
        console.warn(`twin: ${line.slice(0, nl)}`);
        line = line.slice(nl + 1);
      }
      v.setUint32(written, n, true);
      return 0;
    },
    clock_time_get(id, precision, out) {
      const ns = id === 0 ? BigInt(Date.now()) * 1000000n : BigInt(Math.round(performance.now() * 1e6));
      view().setBigUint64(out, ns, true);
      return 0;
    },
    random_get(ptr, len) {
      crypto.getRandomValues(new Uint8Array(memory().buffer, ptr, len));
      return 0;
    },
    environ_sizes_get(count, size) { view().setUint32(count, 0, true); view().setUint32(size, 0, true); return 0; },
    args_sizes_get(count, size) { view().setUint32(count, 0, true); view().setUint32(size, 0, true); return 0; },
    environ_get() { return 0; },
    args_get() { return 0; },
    fd_prestat_get() { return EBADF; },
    proc_exit(code) { throw new Error(`the twin exited (${code})`); },
  };
  return calls;
}

class Twin {
  constructor(instance) {
    this.x = instance.exports;
    this.text = new TextDecoder();
  }
  bytes(ptr, n) { return new Uint8Array(this.x.memory.buffer, ptr, n); }
  string(ptr) {
    const m = new Uint8Array(this.x.memory.buffer);
    let end = ptr;
    while (m[end]) end++;
    return this.text.decode(m.subarray(ptr, end));
  }
  status() { return JSON.parse(this.string(this.x.cv_status())); }
  message() { return this.string(this.x.cv_message()); }
}

async function loadTwin(base, manifest, sounds) {
  const bytes = await getAddressed(base, manifest.wasm.sha256, manifest.wasm.bytes);
  const module = await WebAssembly.compile(bytes);
  const section = WebAssembly.Module.customSections(module, 'cradle_build');
  const stamped = section.length === 1 ? new TextDecoder().decode(section[0]) : '(none)';
  if (stamped !== manifest.build)
    throw new Error(`the twin web/${manifest.wasm.sha256} is build "${stamped}", the session announced "${manifest.build}": refused`);
  let twin = null;
  const memory = () => twin.x.memory;
  const calls = wasi(memory);
  const wasiImports = {};
  const imports = { wasi_snapshot_preview1: wasiImports, cradle: { sound: (id, volume, pitch) => sounds.play(id, volume, pitch) } };
  for (const i of WebAssembly.Module.imports(module)) {
    if (i.module === 'wasi_snapshot_preview1') wasiImports[i.name] = calls[i.name] || (() => 52);
    else if (!(i.module in imports) || !(i.name in imports[i.module])) throw new Error(`the twin imports ${i.module}.${i.name}, which this page does not offer`);
  }
  const instance = await WebAssembly.instantiate(module, imports);
  twin = new Twin(instance);
  if (twin.x._initialize) twin.x._initialize();
  const own = twin.status();
  if (own.build !== manifest.build || own.game !== manifest.game)
    throw new Error(`the twin's contract is ${own.game} build "${own.build}", the session announced ${manifest.game} build "${manifest.build}": refused`);
  page.wasm = manifest.wasm.sha256;
  page.wasmBytes = bytes.length;
  page.build = manifest.build;
  return twin;
}

// ---- sound ------------------------------------------------------------------

// The game's sounds through Web Audio, as audio.c plays them natively: id i
// is the manifest's sounds[i - 1]; pitch changes the rate (and the length).
// Browsers start audio only after a gesture: a click on the page turns it on.
class Sounds {
  constructor() { this.context = null; this.buffers = []; this.files = []; this.played = 0; this.requested = 0; }
  // The list only: the files are fetched when sound is turned on, so a
  // viewer who never does downloads none of them.
  load(base, list) {
    this.base = base;
    this.files = list.map((s) => ({ ...s }));
  }
  async enable(context) {
    if (this.context) return;
    this.context = context || new AudioContext();
    await Promise.all(this.files.map(async (s) => {
      if (s.sha256 === null || s.data) return;
      try { s.data = await getAddressed(this.base, s.sha256, s.bytes); } catch (e) { refuse(`sound ${s.name}: ${e.message}`); }
    }));
    this.buffers = await Promise.all(this.files.map(async (s) => {
      if (!s.data) return null;
      try { return await this.context.decodeAudioData(s.data.slice().buffer); } catch (e) { refuse(`sound ${s.name}: ${e.message}`); return null; }
    }));
  }
  // The next build's sounds (a reload), on if they were: a file fetched
  // before comes from the browser's cache (it is named by its hash).
  async follow(base, list) {
    const next = new Sounds();
    next.load(base, list);
    if (this.context) await next.enable(this.context);
    next.played = this.played;
    next.requested = this.requested;
    page.sounds = next;
    return next;
  }
  play(id, volume, pitch) {
    this.requested++;
    const buffer = this.buffers[id - 1];
    if (!this.context || !buffer || !(volume > 0)) return;
    const source = this.context.createBufferSource();
    source.buffer = buffer;
    source.playbackRate.value = pitch > 0 ? Math.min(Math.max(pitch, 0.25), 4) : 1;
    const gain = this.context.createGain();
    gain.gain.value = Math.min(volume, 1);
    source.connect(gain).connect(this.context.destination);
    source.start();
    this.played++;
  }
}

// ---- the broadcast ----------------------------------------------------------

// Feeds the twin in charge what its follower asks for, until the broadcast
// is over. A reload hands the viewer to another twin (handOff) while a
// request may be on its way: bytes fetched for a twin no longer in charge
// are dropped, and the new one, whose follower is where the old one's was,
// asks for them again.
async function follow(base) {
  for (;;) {
    if (page.phase === 'failed') return;
    const twin = page.twin, x = twin.x;
    if (page.handingOff) {
      await new Promise((resolve) => setTimeout(resolve, WAIT_MS));
      continue;
    }
    const want = x.cv_ask(Date.now());
    if (want === WANT.DONE) return;
    if (want === WANT.WAIT) {
      await new Promise((resolve) => setTimeout(resolve, WAIT_MS));
      continue;
    }
    const path = twin.string(x.cv_path());
    if (want === WANT.SYNC) x.cv_polled(Date.now());
    let bytes;
    try {
      bytes = await get(new URL(path, base), { cache: want === WANT.SYNC ? 'no-cache' : 'default' });
    } catch (e) {
      if (page.twin !== twin || page.handingOff) continue;
      refuse(e.message);
      x.cv_failed();
      continue;
    }
    if (page.twin !== twin || page.handingOff) continue;
    const at = x.cv_doc(bytes.length);
    if (at === 0) {
      refuse(`${path}: ${bytes.length} bytes, more than that document may hold`);
      x.cv_failed();
      continue;
    }
    twin.bytes(at, bytes.length).set(bytes);
    if (x.cv_take(bytes.length) !== 0) refuse(twin.message());
  }
}

// A reload to a build the twin in charge does not hold: that build's twin,
// from the manifest the sync document names for it, takes everything over
// (the follower, the verified log, the state before the reload) and runs
// the reload itself, on_reload and all, where the session ran it.
async function handOff(p, status) {
  page.handingOff = true;
  try {
    if (!status.needs_manifest) throw new Error(`the session reloaded to build "${status.needs_build}", which has no WebAssembly twin in this broadcast`);
    const manifest = checkManifest(JSON.parse(new TextDecoder().decode(await getAddressed(p.base, status.needs_manifest))),
      status.game, status.needs_build);
    const sounds = await page.sounds.follow(p.base, manifest.sounds);
    const next = await loadTwin(p.base, manifest, sounds);
    if (next.x.cv_open(p.delay * 1000, keyArgument(next, p.key), Date.now()) !== 0) throw new Error(next.message());
    const old = page.twin;
    const blob = old.x.cv_handoff();
    if (!blob) throw new Error('the twin could not write its handoff');
    const size = old.x.cv_handoff_size();
    const copy = old.bytes(blob, size).slice();
    const at = next.x.cv_alloc(size);
    next.bytes(at, size).set(copy);
    if (next.x.cv_adopt(at, size) !== 0) throw new Error(next.message());
    page.twin = next;
    page.handoffs++;
  } catch (e) {
    fail(`reload at step ${status.needs_step ?? status.step}: ${e.message}`);
  } finally {
    page.handingOff = false;
  }
}

// ---- drawing ----------------------------------------------------------------

function frames(p, canvas) {
  const context = canvas.getContext('2d', { alpha: false });
  let fpsFrames = 0, fpsSince = performance.now();
  const frame = () => {
    const twin = page.twin;
    const t0 = performance.now();
    const scale = Math.min(window.devicePixelRatio || 1, 2);
    const w = Math.max(1, Math.min(4096, Math.round(canvas.clientWidth * scale)));
    const h = Math.max(1, Math.min(4096, Math.round(canvas.clientHeight * scale)));
    if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
    const now = Date.now();
    const ran = page.handingOff ? 0 : twin.x.cv_advance(now, MAX_STEPS_A_FRAME);
    const at = twin.x.cv_frame(w, h, now, p.hud ? 1 : 0, page.fps);
    if (at) context.putImageData(new ImageData(new Uint8ClampedArray(twin.x.memory.buffer, at, w * h * 4), w, h), 0, 0);
    page.status = twin.status();
    if (ran > 0 && page.firstFrameMs === null) page.firstFrameMs = performance.now() - page.started;
    page.frameMs = performance.now() - t0;
    page.frames++;
    fpsFrames++;
    if (t0 - fpsSince >= 500) { page.fps = fpsFrames * 1000 / (t0 - fpsSince); fpsFrames = 0; fpsSince = t0; }
    showStatus();
    if (page.status.error) return fail(page.status.error);
    if (page.status.ended) page.phase = 'ended';
    if (page.status.needs_build && !page.handingOff) handOff(p, page.status);
    if (page.phase !== 'failed') requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
}

function showStatus() {
  const s = page.status;
  if (!s) return;
  $('step').textContent = s.playing ? String(s.step) : '-';
  $('hash').textContent = s.playing ? s.hash : '-';
  $('verified').textContent = `${s.hashes_checked}${s.hash_mismatches ? ` (${s.hash_mismatches} MISMATCHED)` : ''}`;
  $('behind').textContent = s.playing ? `${(s.behind_ms / 1000).toFixed(1)} s` : '-';
  $('build').textContent = page.build;
  $('signed').textContent = s.signed ? 'pinned key: every block verified' : 'no key pinned';
  $('downloaded').textContent = `${(page.fetched / 1024).toFixed(0)} KiB in ${page.requests} requests`;
  const state = s.hash_mismatches ? 'HASH MISMATCH' : s.ended ? 'ended' : s.buffering ? 'buffering' : s.playing ? 'watching' : 'waiting for the broadcast';
  $('state').textContent = state;
  $('state').className = s.hash_mismatches ? 'bad' : s.ended ? 'done' : s.playing && !s.buffering ? 'ok' : 'wait';
  if (s.last_refusal && (page.refusals.length === 0 || !page.refusals.some((r) => r.what === s.last_refusal))) refuse(s.last_refusal);
}

// ---- start ------------------------------------------------------------------

async function main() {
  let p;
  try { p = parameters(); } catch (e) { return fail(e.message); }
  $('url').textContent = p.base.href;
  page.phase = 'loading';
  // The build to load: the one the sync document names now, by its manifest.
  let sync, manifest;
  for (;;) {
    try {
      sync = JSON.parse(new TextDecoder().decode(await get(new URL('sync', p.base), { cache: 'no-cache', max: 65536 })));
      const web = Array.isArray(sync.web) ? sync.web.find((w) => w && w.build === sync.build) : undefined;
      if (!web || !isHex64(web.manifest)) throw new Error(`the session's build "${sync.build}" has no WebAssembly twin in this broadcast`);
      manifest = checkManifest(JSON.parse(new TextDecoder().decode(await getAddressed(p.base, web.manifest))), sync.game, sync.build);
      break;
    } catch (e) {
      refuse(e.message);
      $('state').textContent = `waiting: ${e.message}`;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
  const sounds = new Sounds();
  sounds.load(p.base, manifest.sounds);
  page.sounds = sounds;
  let twin;
  try { twin = await loadTwin(p.base, manifest, sounds); } catch (e) { return fail(e.message); }
  if (twin.x.cv_open(p.delay * 1000, keyArgument(twin, p.key), Date.now()) !== 0) return fail(twin.message());
  page.twin = twin;
  page.phase = 'watching';
  $('sound').addEventListener('click', async () => {
    await page.sounds.enable();
    $('sound').textContent = 'sound on';
    $('sound').disabled = true;
  });
  frames(p, $('screen'));
  await follow(p.base);
}

// The pinned key as the twin takes it: a C string in its memory, or 0.
function keyArgument(twin, key) {
  if (!key) return 0;
  const at = twin.x.cv_alloc(65);
  twin.bytes(at, 65).set(new TextEncoder().encode(key + '\0'));
  return at;
}

main().catch((e) => fail(e.message));
