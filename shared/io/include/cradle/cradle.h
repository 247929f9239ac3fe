#ifndef CRADLE_CRADLE_H
#define CRADLE_CRADLE_H
/*
 * The umbrella header: one include reaches every module of libcradle.
 *
 *   #include <cradle/cradle.h>
 *
 * Pure modules (libcradle_core, no OS access): errors, clock, input, session,
 * golden, arena, rng, ecs, grid, ring, events, settle, dev, game_abi.
 * I/O modules (libcradle): hash, transport, reload, log, net, config.
 */
#include "cradle/version.h"
#include "cradle/errors.h"
#include "cradle/arena.h"
#include "cradle/clock.h"
#include "cradle/golden.h"
#include "cradle/hash.h"
#include "cradle/input.h"
#include "cradle/cursor.h"
#include "cradle/rng.h"
#include "cradle/session.h"
#include "cradle/input_script.h"
#include "cradle/game_abi.h"
/* CRADLE_UMBRELLA_MODULES: helpers append their module headers below. */
#include "cradle/keys.h"
#include "cradle/token.h"
#include "cradle/secure.h"
#include "cradle/enet_pool.h"
#include "cradle/ratelimit.h"
#include "cradle/dev.h"
#include "cradle/transport.h"
#include "cradle/wire.h"
#include "cradle/settle.h"
#include "cradle/contract.h"
#include "cradle/reload.h"
#include "cradle/trial.h"
#include "cradle/ecs.h"
#include "cradle/grid.h"
#include "cradle/ring.h"
#include "cradle/events.h"
#include "cradle/log.h"
#include "cradle/systime.h"
#include "cradle/parse.h"
#include "cradle/writer.h"
#include "cradle/sim.h"
#include "cradle/sim_storage.h"
#include "cradle/twin.h"
#include "cradle/replay.h"
#include "cradle/replay_index.h"
#include "cradle/os.h"
#include "cradle/help.h"
#include "cradle/golden_digest.h"
#include "cradle/json_reader.h"
#include "cradle/data_files.h"

#endif
