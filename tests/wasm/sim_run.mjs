// node sim_run.mjs MODULE.wasm ARG...: runs a WASI command module (sim_run.c
// built for wasm32-wasi) with ARG... as its arguments and the working folder
// as its one preopened folder; exits with its status.
import { readFile } from 'node:fs/promises';
import { WASI } from 'node:wasi';

const [path, ...args] = process.argv.slice(2);
const wasi = new WASI({ version: 'preview1', args: ['sim_run', ...args], preopens: { '.': '.' }, returnOnExit: true });
const module = await WebAssembly.compile(await readFile(path));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exitCode = wasi.start(instance);
