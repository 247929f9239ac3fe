# cradle_game_library(<target> SOURCES ... [DEFINITIONS ...] [OUTPUT_NAME n])
# builds a game as a shared library against the game ABI: C11, position
# independent, hidden symbols except the contract, float contraction off and
# no fast math, and a build id (CRADLE_BUILD_ID in the generated
# cradle_build_id.h) that changes whenever one of its sources or DEFINITIONS
# changes (a hash computed at build time, so editing a source and
# rebuilding gives a new id). It links Cradle::core, the pure modules.
#
# The same file serves Cradle's own tree (included by CradleTargets.cmake,
# where the project's warnings and sanitizers apply too) and the installed
# SDK (included by CradleConfig.cmake after find_package(Cradle)).

set(CRADLE_GAME_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR})

function(cradle_game_library target)
  cmake_parse_arguments(ARG "" "OUTPUT_NAME" "SOURCES;DEFINITIONS" ${ARGN})
  add_library(${target} MODULE ${ARG_SOURCES})
  if(COMMAND cradle_target_defaults)
    cradle_target_defaults(${target})
  else()
    set_target_properties(${target} PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
    # Determinism: never let the compiler fuse or reorder float operations.
    target_compile_options(${target} PRIVATE -ffp-contract=off -fno-fast-math)
  endif()
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
            -P ${CRADLE_GAME_CMAKE_DIR}/CradleBuildId.cmake
    DEPENDS ${abs_sources} ${CRADLE_GAME_CMAKE_DIR}/CradleBuildId.cmake
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
  target_link_libraries(${target} PRIVATE Cradle::core)
  # The core's functions stay inside the game: its one export is the contract.
  target_link_options(${target} PRIVATE -Wl,--exclude-libs,libcradle_core.a)
endfunction()
