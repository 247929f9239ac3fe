// node replay_run.mjs MODULE.wasm DIRS ARG...: runs a WASI command module
// (replay_run.c built for wasm32-wasi) with ARG... as its arguments; DIRS,
// folders joined by ':', are preopened under their own absolute paths, so
// the module opens the same paths as a native program given the same ARG...
// (stdin, stdout and stderr are node's). Exits with the module's status.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { WASI } from 'node:wasi';

const [path, dirs, ...args] = process.argv.slice(2);
if (!path || dirs === undefined) {
  console.error('usage: node replay_run.mjs MODULE.wasm DIR[:DIR...] ARG...');
  process.exit(2);
}
const preopens = {};
for (const dir of dirs.split(':').filter(Boolean)) preopens[resolve(dir)] = resolve(dir);
const wasi = new WASI({ version: 'preview1', args: ['replay_run', ...args], preopens, returnOnExit: true });
const module = await WebAssembly.compile(await readFile(path));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exitCode = wasi.start(instance);
