# cradle_game_library(<target> SOURCES ... [DEFINITIONS ...] [OUTPUT_NAME n] [NO_TWIN])
# builds a game as a shared library against the game ABI: C11, position
# independent, hidden symbols except the contract, float contraction off and
# no fast math, and a build id (CRADLE_BUILD_ID in the generated
# cradle_build_id.h) that changes whenever one of its sources or DEFINITIONS
# changes (a hash computed at build time, so editing a source and
# rebuilding gives a new id). It links Cradle::core, the pure modules.
# Where the WebAssembly toolchain is, it also builds the game's twin,
# <name>.wasm beside the library, for the browser's viewer
# (cradle_game_wasm below); NO_TWIN leaves it out.
#
# The same file serves Cradle's own tree (included by CradleTargets.cmake,
# where the project's warnings and sanitizers apply too) and the installed
# SDK (included by CradleConfig.cmake after find_package(Cradle)).

set(CRADLE_GAME_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR})

function(cradle_game_library target)
  cmake_parse_arguments(ARG "NO_TWIN" "OUTPUT_NAME" "SOURCES;DEFINITIONS" ${ARGN})
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
  # Its WebAssembly twin (cradle_game_wasm below): the sources and
  # definitions it is built from, and where it goes.
  get_target_property(out_name ${target} OUTPUT_NAME)
  if(NOT out_name)
    set(out_name ${target})
  endif()
  set_target_properties(${target} PROPERTIES
    CRADLE_SOURCES "${abs_sources}"
    CRADLE_DEFINITIONS "${ARG_DEFINITIONS}"
    CRADLE_GEN_DIR "${gen_dir}"
    CRADLE_WASM "${CMAKE_CURRENT_BINARY_DIR}/${out_name}.wasm")
  if(ARG_NO_TWIN)
    return() # a library that is not a game (a test's broken one): no twin to build
  endif()
  set_property(GLOBAL APPEND PROPERTY CRADLE_GAMES ${target})
  get_property(runtime GLOBAL PROPERTY CRADLE_WEB_RUNTIME)
  get_property(done GLOBAL PROPERTY CRADLE_GAMES_TWINNED)
  if(runtime AND done)
    cradle_game_wasm(${target}) # declared after the others were twinned
  endif()
endfunction()

# cradle_game_wasm(<target>): the game's WebAssembly twin, <name>.wasm beside
# its library: the same sources and build id, compiled with clang for
# wasm32-wasi and linked with the browser viewer's runtime (client/web: the
# replay driver, the broadcast's checks and the software renderer, built
# from the same sources as the native ones). Its custom section
# "cradle_build" holds the build id, so a server that broadcasts the session
# offers the twin of the build in charge and nothing else. Stripped of
# function names (--strip-all keeps custom sections): 314 KB, not 557, for
# vanguard, which every viewer downloads. Needs
# CRADLE_WASM_CC (clang-14) and the global properties CRADLE_WEB_RUNTIME
# (the runtime's object and archives) and CRADLE_WEB_INCLUDES, which
# client/web sets; it then calls cradle_game_wasm_all() once the tree's
# games are declared.
function(cradle_game_wasm_all)
  get_property(games GLOBAL PROPERTY CRADLE_GAMES)
  foreach(game ${games})
    cradle_game_wasm(${game})
  endforeach()
  set_property(GLOBAL PROPERTY CRADLE_GAMES_TWINNED TRUE)
endfunction()

# cradle_wasm_objects(<var> <obj dir> FLAGS ... SOURCES ...): one
# wasm32-wasi object per source (C, or .S assembled through the
# preprocessor), each its own command with clang's depfile, so a changed
# header rebuilds exactly the objects that include it; <var> gets the
# objects, in the sources' order.
function(cradle_wasm_objects var obj_dir)
  cmake_parse_arguments(ARG "" "" "FLAGS;SOURCES" ${ARGN})
  set(objects)
  foreach(src ${ARG_SOURCES})
    get_filename_component(name ${src} NAME)
    string(MD5 where ${src}) # sources of one name in two folders stay apart
    string(SUBSTRING ${where} 0 8 where)
    set(obj ${obj_dir}/${where}/${name}.o)
    set(language)
    if(src MATCHES "\\.S$")
      set(language -x assembler-with-cpp)
    endif()
    add_custom_command(
      OUTPUT ${obj}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${obj_dir}/${where}
      COMMAND ${CRADLE_WASM_CC} ${ARG_FLAGS} -MD -MF ${obj}.d ${language} -c ${src} -o ${obj}
      DEPENDS ${src}
      DEPFILE ${obj}.d
      COMMENT "Building ${name} for wasm32-wasi"
      VERBATIM)
    list(APPEND objects ${obj})
  endforeach()
  set(${var} ${objects} PARENT_SCOPE)
endfunction()

function(cradle_game_wasm target)
  get_property(runtime GLOBAL PROPERTY CRADLE_WEB_RUNTIME)
  get_property(includes GLOBAL PROPERTY CRADLE_WEB_INCLUDES)
  get_target_property(sources ${target} CRADLE_SOURCES)
  get_target_property(definitions ${target} CRADLE_DEFINITIONS)
  get_target_property(gen_dir ${target} CRADLE_GEN_DIR)
  get_target_property(wasm ${target} CRADLE_WASM)
  set(c_sources)
  foreach(src ${sources})
    if(src MATCHES "\\.c$")
      list(APPEND c_sources ${src})
    endif()
  endforeach()
  set(flags --target=wasm32-wasi -std=c11 -O2 -ffp-contract=off -fno-fast-math -I${gen_dir})
  foreach(d ${definitions})
    list(APPEND flags -D${d})
  endforeach()
  get_target_property(own_includes ${target} INCLUDE_DIRECTORIES)
  foreach(dir ${includes} ${own_includes})
    if(NOT dir MATCHES "^\\$<")
      list(APPEND flags -I${dir})
    endif()
  endforeach()
  cradle_wasm_objects(objects ${wasm}.obj FLAGS ${flags}
                      SOURCES ${c_sources} ${CRADLE_GAME_CMAKE_DIR}/cradle_build_section.S)
  add_custom_command(
    OUTPUT ${wasm}
    COMMAND ${CRADLE_WASM_CC} --target=wasm32-wasi -mexec-model=reactor ${objects} ${runtime}
            -lwasi-emulated-signal -lwasi-emulated-getpid -Wl,--strip-all -o ${wasm}
    DEPENDS ${objects} ${runtime}
    COMMENT "Linking ${target}'s WebAssembly twin"
    VERBATIM)
  add_custom_target(${target}_wasm ALL DEPENDS ${wasm})
  add_dependencies(${target}_wasm ${target}) # its build id header
  if(TARGET cradle_web)
    add_dependencies(${target}_wasm cradle_web)
  endif()
endfunction()
