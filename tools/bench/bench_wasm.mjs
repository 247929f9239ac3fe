// node --no-warnings tools/bench/bench_wasm.mjs [BUILD_DIR]: the replay in
// WebAssembly against the native one (goal: >= 0.5x native steps/s). One
// 8-player vanguard session with bots (BENCH_WASM_STEPS, default 36000
// steps: 10 minutes of play) recorded with cradle-record, without its data
// files (an empty --data folder: vanguard keeps its built-in values, which
// its shipped files hold, so it plays the same) so that the log alone
// replays from memory with no DATA record to fetch, then replayed in
// BENCH_WASM_ROUNDS (default 5) interleaved rounds, so a machine getting
// busier shows in all three:
//   native    cradle-replay --json, its steps_per_second
//   node      replay_vanguard.wasm (tests/wasm/replay_run.c) in this
//             process's node:wasi, the log given as stdin and replayed from
//             memory, as the browser's viewer replays
//   chromium  the same module in headless Chromium (tests/support/chromium.mjs),
//             on a page served from 127.0.0.1 with a minimal WASI shim of its
//             own (below): the log is the module's stdin, and no file exists
// Each wasm figure is the module's own: CLOCK_MONOTONIC around the replay
// loop only (not the compile, the log's reading or the start-up). The
// module is compiled once per host and instantiated afresh each round, so
// the first round includes V8's tier-up and the best round is the steady
// state; both are printed. None of the three writes the output bytes
// (cradle-replay --json asks for none). All three must end in the same
// state after the same steps, or the figures compare unlike runs and the
// bench fails. It asserts nothing about time.
// BUILD_DIR (default build/release-wasm, which tools/bench.sh builds: it
// needs the tests configured) holds cradle-record, cradle-replay, vanguard.so
// and tests/wasm/replay_vanguard.wasm.
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WASI } from 'node:wasi';
import { launch } from '../../tests/support/chromium.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const build = resolve(process.argv[2] || join(root, 'build/release-wasm'));
const steps = Number(process.env.BENCH_WASM_STEPS || 36000);
const rounds = Number(process.env.BENCH_WASM_ROUNDS || 5);
const record = join(build, 'tools/cradle-record');
const replay = join(build, 'tools/cradle-replay');
const game = join(build, 'shared/games/vanguard/vanguard.so');
const wasmPath = join(build, 'tests/wasm/replay_vanguard.wasm');
for (const f of [record, replay, game, wasmPath]) {
  try { statSync(f); } catch { console.error(`bench_wasm: ${f} is not built (tools/bench.sh wasm builds it)`); process.exit(1); }
}
if (!(Number.isInteger(steps) && steps > 0 && Number.isInteger(rounds) && rounds > 0)) {
  console.error('bench_wasm: BENCH_WASM_STEPS and BENCH_WASM_ROUNDS are positive integers');
  process.exit(2);
}

const work = mkdtempSync(join(tmpdir(), 'cradle-bench-wasm-'));
const log = join(work, 'session.log');
let browser = null, server = null;
const cleanup = async () => {
  if (browser) await browser.close().catch(() => {});
  if (server) server.close();
  rmSync(work, { recursive: true, force: true });
};

// A program's one JSON line, or an Error saying what it printed instead.
function lastJson(text, what) {
  const line = text.trim().split('\n').pop() || '';
  try { return JSON.parse(line); } catch { throw new Error(`${what} printed no JSON line:\n${text}`); }
}

function runNative() {
  const r = spawnSync(replay, ['--json', log], { encoding: 'utf8' });
  const j = lastJson(r.stdout, 'cradle-replay');
  if (r.status !== 0 || j.verdict !== 'ok') throw new Error(`cradle-replay failed: ${r.stderr}${r.stdout}`);
  return j;
}

// node: one compile, a fresh instance and WASI each round; the log as
// stdin, the JSON line into a file (node's WASI takes descriptors).
const wasmBytes = readFileSync(wasmPath);
const nodeModule = await WebAssembly.compile(wasmBytes);
function runNode(round) {
  const outPath = join(work, `node-${round}.json`), errPath = join(work, `node-${round}.err`);
  const fds = [openSync(log, 'r'), openSync(outPath, 'w'), openSync(errPath, 'w')];
  try {
    const wasi = new WASI({ version: 'preview1', args: ['replay_run', '-'], env: {}, stdin: fds[0], stdout: fds[1],
                            stderr: fds[2], returnOnExit: true });
    const instance = new WebAssembly.Instance(nodeModule, wasi.getImportObject());
    const code = wasi.start(instance);
    const j = lastJson(readFileSync(outPath, 'utf8'), 'replay_vanguard.wasm in node');
    if (code !== 0 || j.verdict !== 'ok') throw new Error(`node: exit ${code}: ${readFileSync(errPath, 'utf8')}`);
    return j;
  } finally {
    for (const fd of fds) closeSync(fd);
  }
}

// The page: fetches the module and the log, compiles once, and runs a
// round per call of bench(), a fresh instance each time, through a WASI
// shim that is just enough for replay_run.c reading stdin: arguments, the
// clocks, stdin from the log's bytes, stdout and stderr kept as text,
// random bytes (libsodium), and no files at all (no preopened folder).
const page = `<!doctype html><meta charset=utf-8><title>bench_wasm</title><script>
const E = { BADF: 8, SPIPE: 70, NOTCAPABLE: 76 };
class Exit { constructor(code) { this.code = code; } }
function wasi(args, stdin, out) {
  let memory = null, at = 0;
  const enc = new TextEncoder(), dec = new TextDecoder();
  const argv = args.map((a) => enc.encode(a + '\\0'));
  const view = () => new DataView(memory.buffer), bytes = () => new Uint8Array(memory.buffer);
  const iovs = (ptr, n) => Array.from({ length: n }, (_, i) =>
    [view().getUint32(ptr + 8 * i, true), view().getUint32(ptr + 8 * i + 4, true)]);
  const imports = {
    args_sizes_get(count, size) {
      view().setUint32(count, argv.length, true);
      view().setUint32(size, argv.reduce((n, a) => n + a.length, 0), true);
      return 0;
    },
    args_get(list, buf) {
      for (const [i, a] of argv.entries()) { view().setUint32(list + 4 * i, buf, true); bytes().set(a, buf); buf += a.length; }
      return 0;
    },
    environ_sizes_get(count, size) { view().setUint32(count, 0, true); view().setUint32(size, 0, true); return 0; },
    environ_get() { return 0; },
    clock_time_get(id, precision, out) { // 0 realtime, else monotonic; nanoseconds
      const ns = id === 0 ? BigInt(Date.now()) * 1000000n : BigInt(Math.round(performance.now() * 1e6));
      view().setBigUint64(out, ns, true);
      return 0;
    },
    fd_fdstat_get(fd, out) { // stdin a file, stdout and stderr character devices
      if (fd > 2) return E.BADF;
      bytes().fill(0, out, out + 24);
      view().setUint8(out, fd === 0 ? 4 : 2);
      view().setBigUint64(out + 8, 0xffffffffffffffffn, true);
      return 0;
    },
    fd_fdstat_set_flags(fd) { return fd > 2 ? E.BADF : 0; },
    fd_filestat_get(fd, out) {
      if (fd > 2) return E.BADF;
      bytes().fill(0, out, out + 64);
      view().setUint8(out + 16, fd === 0 ? 4 : 2);
      if (fd === 0) view().setBigUint64(out + 32, BigInt(stdin.length), true);
      return 0;
    },
    fd_read(fd, list, n, nread) {
      if (fd !== 0) return E.BADF;
      let total = 0;
      for (const [buf, len] of iovs(list, n)) {
        const k = Math.min(len, stdin.length - at);
        bytes().set(stdin.subarray(at, at + k), buf);
        at += k; total += k;
        if (k < len) break;
      }
      view().setUint32(nread, total, true);
      return 0;
    },
    fd_write(fd, list, n, nwritten) {
      if (fd !== 1 && fd !== 2) return E.BADF;
      let total = 0;
      for (const [buf, len] of iovs(list, n)) { out[fd] += dec.decode(bytes().subarray(buf, buf + len)); total += len; }
      view().setUint32(nwritten, total, true);
      return 0;
    },
    fd_seek() { return E.SPIPE; },
    fd_pread() { return E.BADF; },
    fd_close() { return 0; },
    fd_prestat_get() { return E.BADF; }, // no preopened folder: the end of wasi-libc's scan
    fd_prestat_dir_name() { return E.BADF; },
    path_open() { return E.NOTCAPABLE; },
    path_filestat_get() { return E.NOTCAPABLE; },
    random_get(buf, len) {
      for (let i = 0; i < len; i += 65536) crypto.getRandomValues(bytes().subarray(buf + i, buf + Math.min(len, i + 65536)));
      return 0;
    },
    proc_exit(code) { throw new Exit(code); },
  };
  return { imports, setMemory(m) { memory = m; } };
}
let module = null, log = null;
async function bench() {
  if (!module) {
    module = await WebAssembly.compile(await (await fetch('replay.wasm')).arrayBuffer());
    log = new Uint8Array(await (await fetch('session.log')).arrayBuffer());
  }
  const out = { 1: '', 2: '' };
  const shim = wasi(['replay_run', '-'], log, out);
  const instance = await WebAssembly.instantiate(module, { wasi_snapshot_preview1: shim.imports });
  shim.setMemory(instance.exports.memory);
  let code = 0;
  try { instance.exports._start(); } catch (e) { if (e instanceof Exit) code = e.code; else throw e; }
  return { code, stdout: out[1], stderr: out[2] };
}
</script>`;

async function runChromium() {
  const r = await browser.evaluate('bench()');
  const j = lastJson(r.stdout, 'replay_vanguard.wasm in Chromium');
  if (r.code !== 0 || j.verdict !== 'ok') throw new Error(`chromium: exit ${r.code}: ${r.stderr}`);
  return j;
}

const median = (v) => [...v].sort((a, b) => a - b)[Math.floor((v.length - 1) / 2)];
const fmt = (n) => Math.round(n).toLocaleString('en-US');

try {
  const noData = join(work, 'no-data');
  mkdirSync(noData);
  const rec = spawnSync(record, ['--game', game, '--data', noData, '--log', log, '--seed', '11', '--players', '8',
                                 '--bots', '--steps', String(steps), '--no-check'], { encoding: 'utf8' });
  if (rec.status !== 0) throw new Error(`cradle-record failed:\n${rec.stderr}`);
  const logBytes = readFileSync(log);
  const files = { '/': ['text/html', Buffer.from(page)], '/replay.wasm': ['application/wasm', wasmBytes],
                  '/session.log': ['application/octet-stream', logBytes] };
  server = createServer((req, res) => {
    const f = files[req.url];
    res.writeHead(f ? 200 : 404, { 'content-type': f ? f[0] : 'text/plain' });
    res.end(f ? f[1] : 'not found');
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  browser = await launch();
  await browser.goto(`http://127.0.0.1:${server.address().port}/`);
  const chromiumVersion = (await browser.send('Browser.getVersion', {}, { session: false })).product;

  const hosts = { native: runNative, node: runNode, chromium: runChromium };
  const results = { native: [], node: [], chromium: [] };
  for (let round = 0; round < rounds; round++) {
    for (const [name, run] of Object.entries(hosts)) results[name].push(await run(round));
  }

  // All three ran the same session to the same state.
  const first = results.native[0];
  for (const [name, runs] of Object.entries(results)) {
    for (const j of runs) {
      if (j.steps !== steps || j.state_hash !== first.state_hash)
        throw new Error(`${name} ends at ${j.steps} steps in state ${j.state_hash}, native at ${first.steps} in ` +
                        `${first.state_hash}: the figures would compare unlike runs`);
    }
  }
  const rate = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, v.map((j) => j.steps_per_second)]));
  const best = Object.fromEntries(Object.entries(rate).map(([k, v]) => [k, Math.max(...v)]));
  console.log(`wasm replay against native: vanguard, 8 players with bots, ${fmt(steps)} steps ` +
              `(log ${(logBytes.length / 1e6).toFixed(2)} MB), best of ${rounds} interleaved rounds:`);
  console.log(`  native    cradle-replay              ${fmt(best.native).padStart(9)} steps/s  ` +
              `(median ${fmt(median(rate.native))})`);
  for (const [name, label] of [['node', `node ${process.version}`], ['chromium', chromiumVersion]]) {
    console.log(`  ${name.padEnd(9)} replay_vanguard.wasm       ${fmt(best[name]).padStart(9)} steps/s  ` +
                `${(best[name] / best.native).toFixed(2)}x native  (median ${fmt(median(rate[name]))}, ` +
                `first round ${fmt(rate[name][0])}; ${label})`);
  }
  const pass = best.node >= 0.5 * best.native && best.chromium >= 0.5 * best.native;
  console.log(`  goal >= 0.50x native in node and in Chromium: ${pass ? 'met' : 'NOT met'}; ` +
              `all end in state ${first.state_hash} after ${fmt(steps)} steps`);
  await cleanup();
} catch (e) {
  console.error(`bench_wasm: ${e.message}`);
  await cleanup();
  process.exit(1);
}
