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

# cradle_game_library(<target> SOURCES ... [DEFINITIONS ...] [OUTPUT_NAME n])
# builds a game as a shared library against the game ABI: position
# independent, hidden symbols except the contract, float contraction off, and
# a build id (CRADLE_BUILD_ID in the generated cradle_build_id.h) that changes
# whenever one of its sources or DEFINITIONS changes (a hash computed at build
# time, so editing a source and rebuilding gives a new id).
function(cradle_game_library target)
  cmake_parse_arguments(ARG "" "OUTPUT_NAME" "SOURCES;DEFINITIONS" ${ARGN})
  add_library(${target} MODULE ${ARG_SOURCES})
  cradle_target_defaults(${target})
  set(gen_dir ${CMAKE_CURRENT_BINARY_DIR}/${target}_gen)
  set(build_id_header ${gen_dir}/cradle_build_id.h)
  set(abs_sources)
  foreach(src ${ARG_SOURCES})
    get_filename_component(abs ${src} ABSOLUTE)
    list(APPEND abs_sources ${abs})
  endforeach()
  add_custom_command(
    OUTPUT ${build_id_header}
    COMMAND ${CMAKE_COMMAND} -DOUT=${build_id_header} "-DSOURCES=${abs_sources}"
            "-DSALT=${ARG_DEFINITIONS}"
            -P ${CRADLE_CMAKE_DIR}/CradleBuildId.cmake
    DEPENDS ${abs_sources} ${CRADLE_CMAKE_DIR}/CradleBuildId.cmake
    COMMENT "Computing build id of ${target}"
    VERBATIM)
  target_sources(${target} PRIVATE ${build_id_header})
  target_include_directories(${target} PRIVATE ${gen_dir})
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    C_VISIBILITY_PRESET hidden
    POSITION_INDEPENDENT_CODE ON)
  if(ARG_OUTPUT_NAME)
    set_target_properties(${target} PROPERTIES OUTPUT_NAME ${ARG_OUTPUT_NAME})
  endif()
  if(ARG_DEFINITIONS)
    target_compile_definitions(${target} PRIVATE ${ARG_DEFINITIONS})
  endif()
  target_link_libraries(${target} PRIVATE cradle_core)
endfunction()
