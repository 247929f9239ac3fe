#ifndef CRADLE_LAYOUT_H
#define CRADLE_LAYOUT_H
/*
 * layout: a game's description of its state block (game_abi.h, minor 3,
 * cradle_state_region) checked, and a state byte named by it.
 *
 *   cradle_layout_check   the regions' rules, with a message naming the
 *                         region and the field ("region 4 (score): extent
 *                         40 > its parent's element size 28")
 *   cradle_layout_name    "players[3].score+2 (state byte 812)" for a byte
 *                         a region covers, "state byte 812" otherwise
 *
 * The regions come from a library, so they are untrusted until checked:
 * check never reads past count regions or a name's maximum length, and does
 * its arithmetic in 64 bits. Pure: no OS, no allocation.
 */
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"
#include "cradle/game_abi.h"

/* Checks count regions (regions may be NULL only when count is 0) against
 * a state of state_size bytes, in this order for each region i:
 *   count <= CRADLE_GAME_MAX_REGIONS, then per region: name 1..
 *   CRADLE_GAME_REGION_NAME_MAX bytes of [A-Za-z0-9_] and a NUL; parent 0
 *   or the index + 1 of an earlier region; size >= 1, count >= 1, stride
 *   >= size when count > 1; offset + stride * (count - 1) + size within one
 *   element of the parent (the state for a top-level region); no overlap
 *   with an earlier sibling's extent.
 * Returns 0 or CRADLE_ERELOAD_CONTRACT with message naming the region
 * ("region 3 (x): ...") and both values. message may be NULL when
 * message_size is 0. */
CRADLE_MUST_CHECK int cradle_layout_check(const cradle_state_region *regions, uint32_t count, uint32_t state_size,
                                          char *message, size_t message_size);

/* Names state byte `offset` by checked regions into out (NUL-terminated,
 * cut to out_size): the path through the regions that hold it, each array
 * element's index in brackets, "+k" when the byte is k bytes into the
 * innermost region's element, then " (state byte N)". A byte no region
 * covers (or a stride's gap) is "state byte N". Returns the length the full
 * name has (snprintf's convention). */
size_t cradle_layout_name(const cradle_state_region *regions, uint32_t count, uint64_t offset, char *out,
                          size_t out_size);

#endif
