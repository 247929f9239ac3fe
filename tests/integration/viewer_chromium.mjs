// viewer_chromium.mjs MODE ...: the browser viewer (deploy/broadcast/viewer.html)
// in headless Chromium, for viewer_chromium.sh. Prints one JSON line per
// thing it saw ({"event":...}); every wait is a condition with a deadline.
//
//   live  EDGE PATH KEY OUT   watches a live broadcast: the first step shown
//                             (link to first frame), steps and verified
//                             hashes, a screenshot (OUT/viewer.png), a
//                             reload followed, the end
//   still EDGE PATH SOFTFRAME LOG OUT
//                             the ended broadcast without the HUD, settled:
//                             its canvas against cradle-softframe's frame
//                             of LOG's last step, pixel by pixel
//   refused EDGE PATH REGEX [KEY]
//                             the page (KEY pinned, if given) refuses something
//                             whose words match REGEX (a damaged fragment, a
//                             twin of another build...) and does not reach
//                             the end it could not verify
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import { launch } from '../support/chromium.mjs';

const [mode, edge, path, ...rest] = process.argv.slice(2);
const say = (event, fields) => console.log(JSON.stringify({ event, ...fields }));
const status = 'window.cradleViewer.status';

// RGBA pixels of a PNG that Chromium wrote (8-bit RGB or RGBA, no interlace).
function decodePng(bytes) {
  let at = 8, width = 0, height = 0, type = 0;
  const idat = [];
  while (at < bytes.length) {
    const n = bytes.readUInt32BE(at), kind = bytes.toString('latin1', at + 4, at + 8), body = bytes.subarray(at + 8, at + 8 + n);
    if (kind === 'IHDR') {
      width = body.readUInt32BE(0); height = body.readUInt32BE(4); type = body[9];
      if (body[8] !== 8 || (type !== 2 && type !== 6) || body[12] !== 0) throw new Error(`PNG: depth ${body[8]} type ${type} interlace ${body[12]}`);
    } else if (kind === 'IDAT') idat.push(body);
    at += 12 + n;
  }
  const raw = inflateSync(Buffer.concat(idat)), bpp = type === 6 ? 4 : 3, stride = width * bpp;
  const out = Buffer.alloc(width * height * 4), line = Buffer.alloc(stride), prev = Buffer.alloc(stride);
  for (let y = 0, p = 0; y < height; y++) {
    const filter = raw[p++];
    for (let x = 0; x < stride; x++) {
      const a = x >= bpp ? line[x - bpp] : 0, b = prev[x], c = x >= bpp ? prev[x - bpp] : 0;
      const pa = Math.abs(b - c), pb = Math.abs(a - c), pc = Math.abs(a + b - 2 * c);
      const pred = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][filter];
      line[x] = (raw[p++] + pred) & 255;
    }
    for (let x = 0; x < width; x++) {
      for (let k = 0; k < 3; k++) out[(y * width + x) * 4 + k] = line[x * bpp + k];
      out[(y * width + x) * 4 + 3] = bpp === 4 ? line[x * bpp + 3] : 255;
    }
    line.copy(prev);
  }
  return { width, height, pixels: out };
}

const browser = await launch({ width: 1280, height: 720 });
try {
  if (mode === 'live') {
    const [key, out] = rest;
    await browser.goto(`${edge}/viewer.html#b=${path}&delay=3&key=${key}`);
    const first = await browser.waitFor('window.cradleViewer.firstFrameMs', { timeoutMs: 60000, what: 'the first step on the page' });
    const atFirst = await browser.evaluate('({fetched: window.cradleViewer.fetched, requests: window.cradleViewer.requests, wasm: window.cradleViewer.wasmBytes})');
    say('first_frame', { ms: Math.round(first), ...atFirst });
    const live = await browser.waitFor(`${status} && ${status}.hashes_checked >= 3 && ${status}.steps >= 240 && ${status}` +
      ` && !${status}.buffering && ${status}`, { timeoutMs: 60000, what: '240 steps and 3 verified hashes' });
    // Sound: a click turns it on (a browser starts audio only after a
    // gesture); the game's sounds then play through Web Audio, decoded from
    // the WAV files the manifest names (Chromium runs muted here).
    await browser.evaluate("document.getElementById('sound').click()");
    const sound = await browser.waitFor('window.cradleViewer.sounds.played > 0 && {played: window.cradleViewer.sounds.played,' +
      ' decoded: window.cradleViewer.sounds.buffers.filter(Boolean).length, files: window.cradleViewer.sounds.files.length}',
      { timeoutMs: 60000, what: 'a sound played' });
    say('sound', sound);
    const t0 = Date.now(), fetched0 = await browser.evaluate('window.cradleViewer.fetched');
    await browser.screenshot(`${out}/viewer.png`);
    say('live', { step: live.step, hash: live.hash, build: live.build, hashes_checked: live.hashes_checked,
      hash_mismatches: live.hash_mismatches, behind_ms: live.behind_ms, signed: live.signed });
    // The session reloads (the script does it once it reads "live").
    const reloaded = await browser.waitFor(`window.cradleViewer.handoffs >= 1 && ${status}.build !== ${JSON.stringify(live.build)}` +
      ` && ${status}.steps >= ${live.steps + 120} && ${status}`, { timeoutMs: 90000, what: 'the reload followed' });
    say('reloaded', { step: reloaded.step, hash: reloaded.hash, build: reloaded.build, hashes_checked: reloaded.hashes_checked,
      hash_mismatches: reloaded.hash_mismatches });
    const rate = await browser.evaluate('window.cradleViewer.fetched');
    say('download', { bytes_per_second: Math.round((rate - fetched0) * 1000 / (Date.now() - t0)) });
    const ended = await browser.waitFor(`${status}.ended && ${status}`, { timeoutMs: 120000, what: 'the broadcast to end on the page' });
    const page = await browser.evaluate('({refusals: window.cradleViewer.refusals.map((r) => r.what), frameMs: window.cradleViewer.frameMs, phase: window.cradleViewer.phase})');
    say('ended', { step: ended.step, hash: ended.hash, build: ended.build, hashes_checked: ended.hashes_checked,
      hash_mismatches: ended.hash_mismatches, error: ended.error, ...page });
  } else if (mode === 'still') {
    const [softframe, log, out] = rest;
    await browser.goto(`${edge}/viewer.html#b=${path}&delay=3&hud=0`);
    // Settled: the end shown, no particle left, no shake, a frame drawn since.
    const s = await browser.waitFor(`${status} && ${status}.ended && ${status}.particles === 0 && !${status}.shake && ${status}`,
      { timeoutMs: 90000, what: 'the ended broadcast, settled' });
    const frames = await browser.evaluate('window.cradleViewer.frames');
    await browser.waitFor(`window.cradleViewer.frames > ${frames + 2}`, { what: 'two more frames' });
    const rect = await browser.evaluate(`(() => { const c = document.getElementById('screen'), r = c.getBoundingClientRect();
      return {x: r.x, y: r.y, width: c.width, height: c.height, cssWidth: r.width, cssHeight: r.height}; })()`);
    if (rect.width !== rect.cssWidth || rect.height !== rect.cssHeight) throw new Error(`canvas ${JSON.stringify(rect)}: not one pixel per CSS pixel`);
    await browser.screenshot(`${out}/still.png`, { clip: { x: rect.x, y: rect.y, width: rect.width, height: rect.height } });
    const shot = decodePng(readFileSync(`${out}/still.png`));
    execFileSync(softframe, [log, String(rect.width), String(rect.height), `${out}/native.rgba`], { stdio: ['ignore', 'ignore', 'inherit'] });
    const native = readFileSync(`${out}/native.rgba`);
    if (shot.width !== rect.width || shot.height !== rect.height || native.length !== shot.pixels.length)
      throw new Error(`sizes: screenshot ${shot.width}x${shot.height}, canvas ${rect.width}x${rect.height}, native ${native.length} bytes`);
    let differing = 0, max = 0;
    for (let i = 0; i < native.length; i += 4) {
      let d = 0;
      for (let k = 0; k < 3; k++) d = Math.max(d, Math.abs(native[i + k] - shot.pixels[i + k]));
      if (d > 0) differing++;
      max = Math.max(max, d);
    }
    writeFileSync(`${out}/still.json`, JSON.stringify(s));
    say('still', { step: s.step, hash: s.hash, build: s.build, width: rect.width, height: rect.height, differing, max_difference: max });
  } else if (mode === 'refused') {
    const [pattern, key] = rest;
    await browser.goto(`${edge}/viewer.html#b=${path}&delay=3${key ? `&key=${key}` : ''}`);
    const re = new RegExp(pattern);
    const what = await browser.waitFor(`window.cradleViewer.refusals.map((r) => r.what).find((w) => ${re}.test(w))`,
      { timeoutMs: 60000, what: `a refusal matching ${re}` });
    const s = await browser.evaluate(`({phase: window.cradleViewer.phase, status: ${status}})`);
    say('refused', { what, phase: s.phase, ended: s.status ? s.status.ended : false, step: s.status ? s.status.step : null });
  } else {
    throw new Error(`mode ${mode}: live, still or refused`);
  }
} catch (e) {
  const tail = await browser.evaluate('JSON.stringify({phase: window.cradleViewer && window.cradleViewer.phase, error: window.cradleViewer && window.cradleViewer.error, refusals: window.cradleViewer && window.cradleViewer.refusals.slice(-5), status: window.cradleViewer && window.cradleViewer.status})').catch(() => '');
  console.error(`viewer_chromium ${mode}: ${e.message}\npage: ${tail}\nconsole:\n${browser.console.slice(-20).join('\n')}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
