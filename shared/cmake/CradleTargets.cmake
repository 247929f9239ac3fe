# Per-target settings shared by every target Cradle owns.

set(CRADLE_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR})
#
# cradle_target_defaults(<target>) gives a target C11 without extensions, the
# project's warning set (fatal when CRADLE_WERROR is on) and the sanitizer
# flags the build asked for. Nothing here touches directory-wide state.

set(CRADLE_WARNINGS
  -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes
  -Wconversion -Wsign-conversion -Wcast-qual -Wformat=2 -Wundef -Wvla
  -Wpointer-arith -Wwrite-strings -Wmissing-declarations -Wnull-dereference)

function(cradle_target_defaults target)
  set_target_properties(${target} PROPERTIES
    C_STANDARD 11
    C_STANDARD_REQUIRED ON
    C_EXTENSIONS OFF
    COMPILE_WARNING_AS_ERROR ${CRADLE_WERROR})
  target_compile_options(${target} PRIVATE ${CRADLE_WARNINGS})
  # ISO C11 plus POSIX.1-2008 (clock_gettime, sockets, dlopen); no GNU extensions.
  target_compile_definitions(${target} PRIVATE _POSIX_C_SOURCE=200809L)
  # Determinism: never let the compiler fuse or reorder float operations.
  target_compile_options(${target} PRIVATE -ffp-contract=off -fno-fast-math)
  # Position-independent code (libcradle_core, game libraries) may still
  # inline and call its own functions directly: nobody interposes them.
  target_compile_options(${target} PRIVATE -fno-semantic-interposition)
  if(CRADLE_ASAN)
    target_compile_options(${target} PRIVATE
      -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
  if(CRADLE_FUZZ)
    # Coverage instrumentation for libFuzzer in every target, so the harnesses
    # see inside the library code they drive (the harness adds the runtime).
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
  if(CRADLE_TSAN)
    target_compile_options(${target} PRIVATE -fsanitize=thread -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=thread)
  endif()
endfunction()

# cradle_game_library(): shared with the installed SDK (CradleGame.cmake).
include(${CMAKE_CURRENT_LIST_DIR}/CradleGame.cmake)
