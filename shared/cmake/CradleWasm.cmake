# The WebAssembly toolchain: Debian's clang 14 with --target=wasm32-wasi,
# wasi-libc, libclang-rt-14-dev-wasm32 and lld-14, llvm-14's archiver, and
# node to run modules in the suite (tools/setup.sh installs them all).
# Sets CRADLE_WASM_CC, CRADLE_WASM_AR, CRADLE_NODE and CRADLE_WASM_READY
# (whether the toolchain links a C program for wasm32-wasi: the compiler,
# its runtime and wasi-libc are three packages). Included by the top-level
# CMakeLists.txt: client/web builds the games' twins and the browser
# viewer's runtime with it, tests/wasm runs them.
find_program(CRADLE_WASM_CC NAMES clang-14)
find_program(CRADLE_WASM_AR NAMES llvm-ar-14 llvm-ar)
find_program(CRADLE_NODE NAMES node nodejs)
set(CRADLE_WASM_READY FALSE)
if(CRADLE_WASM_CC AND CRADLE_WASM_AR AND CRADLE_NODE)
  set(probe_dir ${CMAKE_BINARY_DIR}/wasm-probe)
  file(WRITE ${probe_dir}/probe.c "#include <stdio.h>\nint main(void) { return puts(\"wasm\") < 0; }\n")
  execute_process(COMMAND ${CRADLE_WASM_CC} --target=wasm32-wasi ${probe_dir}/probe.c -o ${probe_dir}/probe.wasm
                  RESULT_VARIABLE probe_rc OUTPUT_QUIET ERROR_QUIET)
  if(probe_rc EQUAL 0)
    set(CRADLE_WASM_READY TRUE)
  endif()
endif()
if(NOT CRADLE_WASM_READY)
  message(WARNING "no wasm32-wasi toolchain (clang-14, wasi-libc, libclang-rt-14-dev-wasm32, lld-14, llvm-14) "
                  "or node: no WebAssembly twins, and the wasm tests will fail; bash tools/setup.sh installs them")
endif()
