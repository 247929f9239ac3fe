#ifndef CRADLE_GRID_H
#define CRADLE_GRID_H
/*
 * grid: collision detection for one step (seed 004). A uniform grid over a
 * fixed rectangle is the broad phase; an axis-aligned box test with layer
 * masks is the narrow phase.
 *
 * Coordinates are integers (int32 world units; a game in fixed point passes
 * its fixed-point values). A box {x, y, w, h} with w, h >= 0 covers the
 * half-open area [x, x+w) x [y, y+h). Two boxes OVERLAP when their
 * intersection has strictly positive area: boxes that only touch along an
 * edge or at a corner do not overlap, and an empty box (w or h == 0) overlaps
 * nothing. Objects a and b COLLIDE when their boxes overlap and
 *   (a.mask & b.layer) != 0 || (b.mask & a.layer) != 0
 * so "enemies ignore enemies" is an enemy layer absent from the enemy mask,
 * and "missiles hit only their targets" is a missile mask holding the target
 * layers.
 *
 * Objects partly or wholly outside the rectangle are clamped to the border
 * cells (they are still tested exactly, never lost). An object covering more
 * than large_cells cells, or one that would exceed the entry budget
 * (max_entries cell entries in total), goes to an overflow list whose members
 * are tested against every object. Either way the result is exact.
 *
 * Per step:
 *   cradle_grid_clear(g);
 *   for each object: cradle_grid_insert(g, id, box, layer, mask);
 *   n = cradle_grid_pairs(g, pairs, capacity, &dropped);
 *
 * Output order: objects are numbered by insertion order (0, 1, 2 ... since
 * the last clear). Each colliding pair is reported exactly once as
 * {a = id of the earlier-inserted object, b = id of the later one}, and the
 * pairs are sorted by (insertion number of a, insertion number of b). This
 * order depends only on the inserted objects, not on the cell size or the
 * rectangle. When the caller's buffer is too small the FIRST `capacity` pairs
 * in that order are stored and the rest are counted in *dropped.
 *
 * Memory: one caller-provided block aligned to CRADLE_GRID_ALIGN and
 * cradle_grid_bytes(config) long. It holds offsets, never pointers, so it can
 * be copied to another CRADLE_GRID_ALIGN-aligned address and
 * (cradle_grid *)copy keeps working (e.g. inside a game's state block).
 * Nothing allocates after init. Pure: no OS access.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"

#define CRADLE_GRID_ALIGN 16u
#define CRADLE_GRID_MAX_CELLS (1u << 24)
#define CRADLE_GRID_MAX_OBJECTS (1u << 24)
#define CRADLE_GRID_DEFAULT_LARGE_CELLS 64u

typedef struct cradle_box {
    int32_t x, y; /* top-left corner */
    int32_t w, h; /* >= 0 */
} cradle_box;

typedef struct cradle_grid_pair {
    uint32_t a; /* id of the earlier-inserted object */
    uint32_t b; /* id of the later-inserted object */
} cradle_grid_pair;

/* Zero means default where a default is listed. */
typedef struct cradle_grid_config {
    int32_t x, y;            /* the rectangle's top-left corner */
    int32_t width, height;   /* > 0 */
    int32_t cell_size;       /* > 0; cells are cell_size x cell_size, the last
                                row and column may stick out of the rectangle */
    uint32_t max_objects;    /* 1..CRADLE_GRID_MAX_OBJECTS per step */
    uint32_t max_entries;    /* cell entries in total; 0 = 4 * max_objects */
    uint32_t large_cells;    /* objects covering more cells go to the overflow
                                list; 0 = CRADLE_GRID_DEFAULT_LARGE_CELLS */
    uint32_t max_pairs;      /* colliding pairs per step the fast path buffers;
                                0 = 2 * max_objects. A step with more still gets
                                the exact result, by a slower path. */
} cradle_grid_config;

/* Opaque: the header at the start of the grid block. */
typedef struct cradle_grid cradle_grid;

/* Compile-time size: cradle_grid_bytes(config) equals
 *   CRADLE_GRID_BYTES_PAIRS(width, height, cell_size, max_objects, max_entries, max_pairs)
 * with max_entries and max_pairs after defaulting (0 -> 4 * max_objects and
 * 0 -> 2 * max_objects); CRADLE_GRID_BYTES is the same with the default
 * max_pairs. */
#define CRADLE_GRID_HEADER_BYTES 128u
#define CRADLE_GRID_OBJECT_BYTES 48u
#define CRADLE_GRID__R16(n) ((((size_t)(n)) + 15u) & ~(size_t)15u)
#define CRADLE_GRID_COLUMNS(width, cell_size) \
    (((size_t)(width) + (size_t)(cell_size) - 1u) / (size_t)(cell_size))
#define CRADLE_GRID_BYTES_PAIRS(width, height, cell_size, max_objects, max_entries, max_pairs) \
    ((size_t)CRADLE_GRID_HEADER_BYTES +                                                    \
     CRADLE_GRID__R16((size_t)CRADLE_GRID_OBJECT_BYTES * (size_t)(max_objects)) +          \
     CRADLE_GRID__R16(4u * (CRADLE_GRID_COLUMNS(width, cell_size) *                        \
                           CRADLE_GRID_COLUMNS(height, cell_size) + 1u)) +                 \
     CRADLE_GRID__R16(4u * (size_t)(max_entries)) +                                        \
     2u * CRADLE_GRID__R16(4u * (size_t)(max_objects)) +                                   \
     2u * CRADLE_GRID__R16(8u * (size_t)(max_pairs)))
#define CRADLE_GRID_BYTES(width, height, cell_size, max_objects, max_entries) \
    CRADLE_GRID_BYTES_PAIRS(width, height, cell_size, max_objects, max_entries, \
                            2u * (size_t)(max_objects))

/* Bytes of the grid block for config, or 0 when the config is invalid (a
 * non-positive size, more than CRADLE_GRID_MAX_CELLS cells, max_objects out
 * of range, a rectangle whose far edge overflows int32) or the block would
 * not fit in 4 GiB. */
size_t cradle_grid_bytes(const cradle_grid_config *config);

/* Lays out an empty grid in block (aligned to CRADLE_GRID_ALIGN, at least
 * cradle_grid_bytes(config) long). Returns it (== block), or NULL when block
 * is NULL or misaligned, too small, or the config is invalid. */
cradle_grid *cradle_grid_init(void *block, size_t block_size, const cradle_grid_config *config);

static inline cradle_grid *cradle_grid_of(void *block) { return (cradle_grid *)block; }

/* Forgets every object (start of a step). O(1). */
void cradle_grid_clear(cradle_grid *grid);

/* Adds an object for this step. id is the caller's (an entity id, say; ids
 * need not be unique but pairs are reported by id). Returns 0; CRADLE_EINVAL
 * when box.w or box.h is negative or x+w / y+h overflows int32 (nothing
 * stored); CRADLE_EFULL when max_objects objects are already inserted. */
int cradle_grid_insert(cradle_grid *grid, uint32_t id, cradle_box box, uint32_t layer,
                       uint32_t mask);

/* Objects inserted since the last clear. */
uint32_t cradle_grid_count(const cradle_grid *grid);

/* Objects of this step that went to the overflow list (large or over the
 * entry budget); for tuning cell_size and max_entries. */
uint32_t cradle_grid_overflow_count(const cradle_grid *grid);

/* Writes the colliding pairs of this step into out (capacity entries, out may
 * be NULL when capacity is 0) in the order described above; returns the
 * number stored and sets *dropped (may be NULL) to the number of colliding
 * pairs that did not fit. May be called again (same answer) until the next
 * insert or clear. Cost: about linear in objects + pairs for evenly spread
 * objects up to about cell size; each overflow-list object costs a test
 * against every object, so keep cradle_grid_overflow_count() near 0 (a cell
 * size near the common object size, enough max_entries). A step with more
 * than max_pairs pairs takes a slower, equally exact path. */
uint32_t cradle_grid_pairs(cradle_grid *grid, cradle_grid_pair *out, uint32_t capacity,
                           uint32_t *dropped);

/* Writes the ids of the objects whose boxes overlap `box` and whose layer
 * intersects `mask` (a one-sided test: the objects' own masks are ignored)
 * into out, in insertion order, first `capacity` of them; returns the number
 * stored and sets *dropped (may be NULL) to the number that did not fit. An
 * invalid box (negative size or int32 overflow) matches nothing. */
uint32_t cradle_grid_query(cradle_grid *grid, cradle_box box, uint32_t mask, uint32_t *out,
                           uint32_t capacity, uint32_t *dropped);

/* True when boxes a and b overlap (strictly positive intersection area). */
bool cradle_box_overlap(cradle_box a, cradle_box b);

#endif
