# CradleWasmDeps.cmake: libsodium and zstd as static WebAssembly archives
# (--target=wasm32-wasi), compiled from Debian's own source packages so the
# wasm build hashes, verifies and decompresses with the same code as the
# native build (libsodium-dev, libzstd-dev). tools/wasm_sources.sh unpacks the
# sources; neither library's autotools nor Makefiles run.
#
# Expects CRADLE_WASM_CC (clang-14) from the includer. Defines there:
#   CRADLE_WASM_DEPS_FOUND       TRUE when both archives can be built
#   CRADLE_WASM_SODIUM_LIB       ${CMAKE_BINARY_DIR}/wasm-deps/libsodium.a
#   CRADLE_WASM_ZSTD_LIB         ${CMAKE_BINARY_DIR}/wasm-deps/libzstd.a
#   CRADLE_WASM_DEPS_INCLUDES    -I flags for <sodium.h> and <zstd.h>
#   CRADLE_WASM_DEPS_LINK_FLAGS  what a program linking the archives adds
# and the targets cradle_wasm_sodium and cradle_wasm_zstd (in ALL), which
# build the archives: a custom command linking them lists the archives in
# its DEPENDS; a target in another directory also needs add_dependencies.
# Every object file is its own custom command, so the build is incremental
# (clang's depfiles track the headers) and runs in parallel.

set(CRADLE_WASM_SOURCES /usr/local/src/cradle-wasm CACHE PATH
    "Where tools/wasm_sources.sh unpacked Debian's sources of libsodium and zstd")

# The archiver. llvm-ar writes the symbol index wasm-ld needs (wasm-ld
# refuses an archive without one, "run ranlib to add one"); it is in
# Debian's llvm-14, which clang-14 only recommends. Without it, GNU ar
# (binutils, a dependency of clang-14) cannot index wasm objects, but it
# indexes LLVM bitcode through LLVMgold.so (llvm-14-linker-tools, another
# dependency of clang-14): the archives then hold bitcode (-flto), and
# wasm-ld compiles what a program uses of them when it links it.
find_program(CRADLE_WASM_AR NAMES llvm-ar-14 llvm-ar HINTS /usr/lib/llvm-14/bin
             DOC "llvm-ar for the wasm32-wasi archives (Debian: llvm-14)")
find_file(CRADLE_WASM_LLVMGOLD NAMES LLVMgold.so PATHS /usr/lib/llvm-14/lib NO_DEFAULT_PATH
          DOC "LLVM's plugin with which GNU ar indexes bitcode (Debian: llvm-14-linker-tools)")

# _cradle_wasm_newest(<var> <pattern> <file>): the folder
# CRADLE_WASM_SOURCES/<pattern> of the newest version that holds <file>, or
# "" (any Debian version: libsodium-1.0.18, libzstd-1.5.4+dfsg2, ...).
function(_cradle_wasm_newest var pattern file)
  file(GLOB dirs LIST_DIRECTORIES true ${CRADLE_WASM_SOURCES}/${pattern})
  list(SORT dirs COMPARE NATURAL ORDER DESCENDING)
  set(found "")
  foreach(dir IN LISTS dirs)
    if(EXISTS ${dir}/${file})
      set(found ${dir})
      break()
    endif()
  endforeach()
  set(${var} "${found}" PARENT_SCOPE)
endfunction()

# _cradle_wasm_library(<target> <archive> AR <command>... SOURCES ... FLAGS ...):
# each source compiled under wasm-deps/obj/<archive's name>/ by
# cradle_wasm_objects (CradleGame.cmake: a command and a depfile each, and
# libsodium's many files of one name in different folders kept apart), then
# the archive, rebuilt from scratch (no stale members), and the target.
function(_cradle_wasm_library target archive)
  cmake_parse_arguments(ARG "" "" "AR;SOURCES;FLAGS" ${ARGN})
  get_filename_component(name ${archive} NAME_WE)
  cradle_wasm_objects(objects ${CMAKE_BINARY_DIR}/wasm-deps/obj/${name} FLAGS ${ARG_FLAGS} SOURCES ${ARG_SOURCES})
  add_custom_command(
    OUTPUT ${archive}
    COMMAND ${CMAKE_COMMAND} -E rm -f ${archive}
    COMMAND ${ARG_AR} ${archive} ${objects}
    DEPENDS ${objects}
    COMMENT "Archiving wasm-deps/${name}.a (wasm32-wasi)"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS ${archive})
endfunction()

# _cradle_wasm_rules(<sodium dir> <zstd dir> <sodium's include dir>
#                    AR <command>... [EXTRA <flag>...]): the two libraries.
function(_cradle_wasm_rules sodium_dir zstd_dir include_dir)
  cmake_parse_arguments(ARG "" "" "AR;EXTRA" ${ARGN})
  # Third-party code: its warnings are not ours to fix, but a function used
  # without a declaration is an error, since wasm-ld would link a call of
  # the wrong signature as a trap.
  set(common_flags --target=wasm32-wasi -O2 ${ARG_EXTRA} -Wno-everything
      -Werror=implicit-function-declaration)

  # libsodium, with by hand what its configure finds for wasm32-wasi:
  #  CONFIGURED=1             stands for config.h (autotools are not run);
  #  _GNU_SOURCE              configure's AC_USE_SYSTEM_EXTENSIONS: wasi-libc
  #                           then declares arc4random_buf, with which
  #                           randombytes_sysrandom reads WASI's random_get;
  #  _WASI_EMULATED_SIGNAL    sodium/utils.c includes <signal.h>, which
  #                           wasi-libc refuses without it (the raise() is
  #                           compiled out under __wasm__);
  #  NATIVE_LITTLE_ENDIAN=1   wasm is little-endian: words are loaded and
  #                           stored with memcpy, not byte by byte;
  #  HAVE_C_VARARRAYS=1       sodium_stackzero clears the stack;
  #  HAVE_EXPLICIT_BZERO=1    sodium_memzero is wasi-libc's explicit_bzero.
  # Left out on purpose: HAVE_PTHREAD and HAVE_ATOMIC_OPS (no threads in
  # wasm32-wasi: sodium_init's lock is a no-op); HAVE_TI_MODE (configure's
  # check refuses 128-bit arithmetic with clang off x86-64 and arm64: the
  # field arithmetic is the 32-bit-limb code); HAVE_POSIX_MEMALIGN and
  # HAVE_MMAP (wasm has no page protection, so sodium_malloc's guard pages,
  # 64 KiB pages in wasi-libc, would only waste memory: sodium_malloc is
  # malloc); any asm or x86 intrinsics (no HAVE_*_ASM, HAVE_*INTRIN_H); and
  # ED25519_NONDETERMINISTIC, which upstream's wasm build script sets:
  # signatures stay RFC 8032's deterministic ones, the same as natively.
  set(sodium_src ${sodium_dir}/src/libsodium)
  file(GLOB_RECURSE sodium_sources ${sodium_src}/*.c)
  list(SORT sodium_sources)
  _cradle_wasm_library(cradle_wasm_sodium ${CRADLE_WASM_SODIUM_LIB}
    AR ${ARG_AR}
    SOURCES ${sodium_sources}
    FLAGS ${common_flags}
          -DCONFIGURED=1 -D_GNU_SOURCE -D_WASI_EMULATED_SIGNAL -DNATIVE_LITTLE_ENDIAN=1
          -DHAVE_C_VARARRAYS=1 -DHAVE_EXPLICIT_BZERO=1
          -I${include_dir} -I${include_dir}/sodium)

  # zstd, as its lib/Makefile builds it single-threaded: no ZSTD_MULTITHREAD
  # (no threads in wasm32-wasi; pool.c and threading.c then compile to
  # zstd's own single-threaded code),
  # ZSTD_DISABLE_ASM (its one .S file, x86-64 Huffman decoding, is not
  # compiled here anyway), and libzstd.mk's XXH_NAMESPACE=ZSTD_ (its xxhash
  # symbols clash with no other copy). Left out: lib/legacy (frames of
  # zstd before 0.8, which Debian's build still decodes) and lib/dictBuilder
  # (training dictionaries).
  file(GLOB zstd_sources ${zstd_dir}/lib/common/*.c ${zstd_dir}/lib/compress/*.c
       ${zstd_dir}/lib/decompress/*.c)
  list(SORT zstd_sources)
  _cradle_wasm_library(cradle_wasm_zstd ${CRADLE_WASM_ZSTD_LIB}
    AR ${ARG_AR}
    SOURCES ${zstd_sources}
    FLAGS ${common_flags} -DZSTD_DISABLE_ASM -DXXH_NAMESPACE=ZSTD_
          -I${zstd_dir}/lib -I${zstd_dir}/lib/common)
endfunction()

function(cradle_wasm_deps)
  set(CRADLE_WASM_DEPS_FOUND FALSE PARENT_SCOPE)
  _cradle_wasm_newest(sodium_dir "libsodium-*" src/libsodium/include/sodium.h)
  _cradle_wasm_newest(zstd_dir "libzstd-*" lib/zstd.h)
  if(NOT sodium_dir OR NOT zstd_dir)
    message(WARNING "no sources of libsodium or zstd in ${CRADLE_WASM_SOURCES}: "
                    "run bash tools/wasm_sources.sh, then cmake again")
    return()
  endif()
  if(NOT CRADLE_WASM_CC)
    message(WARNING "CradleWasmDeps.cmake: CRADLE_WASM_CC (clang-14) is not set")
    return()
  endif()
  if(CRADLE_WASM_AR)
    set(ar ${CRADLE_WASM_AR} rcs)
    set(extra)
  elseif(CMAKE_AR AND CRADLE_WASM_LLVMGOLD)
    set(ar ${CMAKE_AR} --plugin ${CRADLE_WASM_LLVMGOLD} rcs)
    set(extra -flto)
    message(STATUS "No llvm-ar (Debian: llvm-14): the wasm32-wasi archives hold LLVM bitcode")
  else()
    message(WARNING "no archiver for the wasm32-wasi libraries: install llvm-14")
    return()
  endif()

  # libsodium's headers as its "make install" lays them out: a copy of
  # src/libsodium/include (configure_file: CMake runs again if one
  # changes) with sodium/version.h made from its template, beside the
  # export.h it includes. Its version and library version are those
  # configure.ac declares (libsodium 1.0.18: 1.0.18, 10 and 3).
  set(VERSION "")
  set(SODIUM_LIBRARY_VERSION_MAJOR "")
  set(SODIUM_LIBRARY_VERSION_MINOR "")
  set(SODIUM_LIBRARY_MINIMAL_DEF "") # the full library, as Debian's
  file(STRINGS ${sodium_dir}/configure.ac lines
       REGEX "^(AC_INIT\\(|SODIUM_LIBRARY_VERSION_(MAJOR|MINOR)=)")
  foreach(line IN LISTS lines)
    if(line MATCHES "^AC_INIT\\(\\[libsodium\\], *\\[([^]]+)\\]")
      set(VERSION ${CMAKE_MATCH_1})
    elseif(line MATCHES "^(SODIUM_LIBRARY_VERSION_(MAJOR|MINOR))=([0-9]+)")
      set(${CMAKE_MATCH_1} ${CMAKE_MATCH_3})
    endif()
  endforeach()
  if(VERSION STREQUAL "" OR SODIUM_LIBRARY_VERSION_MAJOR STREQUAL ""
     OR SODIUM_LIBRARY_VERSION_MINOR STREQUAL "")
    message(WARNING "no libsodium version in ${sodium_dir}/configure.ac")
    return()
  endif()
  set(out ${CMAKE_BINARY_DIR}/wasm-deps)
  set(include_dir ${out}/sodium-include)
  set(headers_src ${sodium_dir}/src/libsodium/include)
  file(GLOB_RECURSE headers RELATIVE ${headers_src} ${headers_src}/*.h)
  foreach(header IN LISTS headers)
    configure_file(${headers_src}/${header} ${include_dir}/${header} COPYONLY)
  endforeach()
  configure_file(${headers_src}/sodium/version.h.in ${include_dir}/sodium/version.h @ONLY)

  set(CRADLE_WASM_SODIUM_LIB ${out}/libsodium.a)
  set(CRADLE_WASM_ZSTD_LIB ${out}/libzstd.a)
  if(NOT TARGET cradle_wasm_sodium) # else included before: the rules exist
    _cradle_wasm_rules(${sodium_dir} ${zstd_dir} ${include_dir} AR ${ar} EXTRA ${extra})
  endif()

  set(CRADLE_WASM_SODIUM_LIB ${CRADLE_WASM_SODIUM_LIB} PARENT_SCOPE)
  set(CRADLE_WASM_ZSTD_LIB ${CRADLE_WASM_ZSTD_LIB} PARENT_SCOPE)
  set(CRADLE_WASM_DEPS_INCLUDES -I${include_dir} -I${zstd_dir}/lib PARENT_SCOPE)
  # wasi-libc's signal emulation, which <signal.h> asks for (an archive: it
  # adds nothing unless something calls it).
  set(CRADLE_WASM_DEPS_LINK_FLAGS -lwasi-emulated-signal PARENT_SCOPE)
  set(CRADLE_WASM_DEPS_FOUND TRUE PARENT_SCOPE)
  message(STATUS "wasm32-wasi libsodium ${VERSION} (${sodium_dir}) and zstd (${zstd_dir})")
endfunction()

cradle_wasm_deps()
