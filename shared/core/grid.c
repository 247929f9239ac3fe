#include "cradle/grid.h"

#include <assert.h>
#include <string.h>

/*
 * Block layout (every region starts on a 16-byte boundary):
 *   header                        CRADLE_GRID_HEADER_BYTES
 *   hot[max_objects]              grid_hot: what the pair test reads
 *   cold[max_objects]             grid_cold: the rest, in insertion order
 *   cell_start[cells + 1]         u32: cell c's entries are
 *                                 entries[cell_start[c] .. cell_start[c+1])
 *   entries[max_entries]          u32 object numbers, ascending within a cell
 *   scratch[max_objects]          u32, one object's partners while sorting
 *   overflow[max_objects]         u32 object numbers of the overflow list
 *   keys[max_pairs], tmp[max_pairs]  u64 pair keys and the radix sort's buffer
 * The cell lists are rebuilt (counting sort, O(cells + entries)) on the first
 * query after an insert. Inserts made before that first query count their
 * cells into cell_start as they go (COUNTS_ON), so the build needs only the
 * prefix sum and one placement pass; an insert after a query (COUNTS_STALE,
 * cell_start then holds starts) leaves the counting to the build.
 *
 * A pair of grid objects shows up in every cell both cover; it is kept only in
 * the cell holding the top-left corner of the intersection of their (clamped)
 * cell ranges, so it is reported once without a visited set.
 *
 * A power-of-two cell size turns the coordinate-to-cell division into a
 * shift (cell_shift); other sizes divide in 32 bits.
 *
 * pairs() walks the cells in memory order (cache friendly), collects pair
 * keys (first << bits | second), radix-sorts them and emits them. When a step
 * has more than max_pairs pairs it falls back to walking the objects in
 * insertion order, collecting and sorting each object's later partners: the
 * same output, slower.
 */

typedef struct grid_hot {
    int32_t x0, y0, x1, y1; /* box as half-open [x0, x1) x [y0, y1), in 64-bit-safe range */
    uint32_t layer, mask;
    uint32_t cx0, cy0;      /* first covered cell, clamped */
} grid_hot;

typedef struct grid_cold {
    uint32_t id;
    uint32_t cx1, cy1; /* last covered cell, clamped, inclusive */
    uint32_t flags;
} grid_cold;

#define COUNTS_RESET 0u /* after clear(): garbage, zeroed by the first insert */
#define COUNTS_ON 1u    /* per-cell entry counts of every insert so far */
#define COUNTS_STALE 2u /* cell starts of an earlier build: the build recounts */
#define NO_SHIFT 32u /* cell_shift of a cell size that is not a power of two */

#define OBJECT_OVERFLOW 1u /* in the overflow list, not in the cells */
#define OBJECT_EMPTY 2u    /* zero area: overlaps nothing, stored nowhere */

_Static_assert(sizeof(grid_hot) + sizeof(grid_cold) == CRADLE_GRID_OBJECT_BYTES,
               "CRADLE_GRID_OBJECT_BYTES");
_Static_assert(sizeof(grid_hot) % 16u == 0 && sizeof(grid_cold) % 16u == 0,
               "each object array keeps the next region 16-byte aligned");

struct cradle_grid {
    int32_t x, y, width, height, cell_size;
    uint32_t columns, rows, cells;
    uint32_t max_objects, max_entries, large_cells, max_pairs;
    uint32_t key_bits;       /* bits of one object number in a pair key */
    uint32_t count;          /* objects this step */
    uint32_t overflow_count; /* of them in the overflow list */
    uint32_t entry_count;    /* cell entries they need */
    uint32_t built;          /* cell lists match the objects */
    uint32_t counts;         /* COUNTS_*: what cell_start holds between builds */
    uint32_t cell_shift;     /* log2(cell_size), or NO_SHIFT */
    uint32_t hot_offset, cold_offset, start_offset, entries_offset, scratch_offset,
        overflow_offset, keys_offset, tmp_offset;
    uint32_t total_bytes;
};

_Static_assert(sizeof(struct cradle_grid) <= CRADLE_GRID_HEADER_BYTES,
               "CRADLE_GRID_HEADER_BYTES must cover the header");
_Static_assert(CRADLE_GRID_HEADER_BYTES % 16u == 0, "regions stay 16-byte aligned");

static uint64_t r16(uint64_t n) { return (n + 15u) & ~(uint64_t)15u; }

typedef struct grid_shape {
    uint64_t columns, rows, max_entries, large_cells, max_pairs, bytes;
} grid_shape;

static bool shape_of(const cradle_grid_config *config, grid_shape *shape) {
    if (config == NULL) return false;
    if (config->width <= 0 || config->height <= 0 || config->cell_size <= 0) return false;
    if ((int64_t)config->x + config->width > INT32_MAX) return false;
    if ((int64_t)config->y + config->height > INT32_MAX) return false;
    if (config->max_objects == 0 || config->max_objects > CRADLE_GRID_MAX_OBJECTS) return false;
    uint64_t cs = (uint64_t)config->cell_size;
    shape->columns = ((uint64_t)config->width + cs - 1u) / cs;
    shape->rows = ((uint64_t)config->height + cs - 1u) / cs;
    if (shape->columns * shape->rows > CRADLE_GRID_MAX_CELLS) return false;
    shape->max_entries = config->max_entries ? config->max_entries : 4u * (uint64_t)config->max_objects;
    if (shape->max_entries > UINT32_MAX) return false;
    shape->large_cells = config->large_cells ? config->large_cells : CRADLE_GRID_DEFAULT_LARGE_CELLS;
    shape->max_pairs = config->max_pairs ? config->max_pairs : 2u * (uint64_t)config->max_objects;
    shape->bytes = CRADLE_GRID_BYTES_PAIRS((uint64_t)config->width, (uint64_t)config->height,
                                           (uint64_t)config->cell_size, (uint64_t)config->max_objects,
                                           shape->max_entries, shape->max_pairs);
    return shape->bytes <= UINT32_MAX;
}

size_t cradle_grid_bytes(const cradle_grid_config *config) {
    grid_shape shape;
    return shape_of(config, &shape) ? (size_t)shape.bytes : 0;
}

static unsigned char *base(const cradle_grid *grid) { return (unsigned char *)(uintptr_t)grid; }

static grid_hot *hot(const cradle_grid *grid) {
    return (grid_hot *)(void *)(base(grid) + grid->hot_offset);
}
static grid_cold *cold(const cradle_grid *grid) {
    return (grid_cold *)(void *)(base(grid) + grid->cold_offset);
}
static uint32_t *cell_start(const cradle_grid *grid) {
    return (uint32_t *)(void *)(base(grid) + grid->start_offset);
}
static uint32_t *entries(const cradle_grid *grid) {
    return (uint32_t *)(void *)(base(grid) + grid->entries_offset);
}
static uint32_t *scratch(const cradle_grid *grid) {
    return (uint32_t *)(void *)(base(grid) + grid->scratch_offset);
}
static uint32_t *overflow(const cradle_grid *grid) {
    return (uint32_t *)(void *)(base(grid) + grid->overflow_offset);
}
static uint64_t *keys(const cradle_grid *grid) {
    return (uint64_t *)(void *)(base(grid) + grid->keys_offset);
}
static uint64_t *keys_tmp(const cradle_grid *grid) {
    return (uint64_t *)(void *)(base(grid) + grid->tmp_offset);
}

cradle_grid *cradle_grid_init(void *block, size_t block_size, const cradle_grid_config *config) {
    grid_shape shape;
    if (!shape_of(config, &shape) || block == NULL || block_size < shape.bytes) return NULL;
    if ((uintptr_t)block % CRADLE_GRID_ALIGN != 0) return NULL;
    cradle_grid *grid = block;
    memset(grid, 0, CRADLE_GRID_HEADER_BYTES);
    grid->x = config->x;
    grid->y = config->y;
    grid->width = config->width;
    grid->height = config->height;
    grid->cell_size = config->cell_size;
    grid->columns = (uint32_t)shape.columns;
    grid->rows = (uint32_t)shape.rows;
    grid->cells = (uint32_t)(shape.columns * shape.rows);
    grid->max_objects = config->max_objects;
    grid->max_entries = (uint32_t)shape.max_entries;
    grid->large_cells = (uint32_t)shape.large_cells;
    grid->max_pairs = (uint32_t)shape.max_pairs;
    grid->key_bits = 1;
    while ((1u << grid->key_bits) < config->max_objects) grid->key_bits++;
    grid->cell_shift = NO_SHIFT;
    for (uint32_t b = 0; b < 31u; b++) {
        if ((uint32_t)config->cell_size == 1u << b) grid->cell_shift = b;
    }
    uint64_t at = CRADLE_GRID_HEADER_BYTES;
    uint64_t n = config->max_objects;
    grid->hot_offset = (uint32_t)at;
    at += r16(sizeof(grid_hot) * n);
    grid->cold_offset = (uint32_t)at;
    at += r16(sizeof(grid_cold) * n);
    grid->start_offset = (uint32_t)at;
    at += r16(4u * ((uint64_t)grid->cells + 1u));
    grid->entries_offset = (uint32_t)at;
    at += r16(4u * (uint64_t)grid->max_entries);
    grid->scratch_offset = (uint32_t)at;
    at += r16(4u * n);
    grid->overflow_offset = (uint32_t)at;
    at += r16(4u * n);
    grid->keys_offset = (uint32_t)at;
    at += r16(8u * (uint64_t)grid->max_pairs);
    grid->tmp_offset = (uint32_t)at;
    at += r16(8u * (uint64_t)grid->max_pairs);
    assert(at == shape.bytes);
    grid->total_bytes = (uint32_t)at;
    cradle_grid_clear(grid);
    return grid;
}

void cradle_grid_clear(cradle_grid *grid) {
    grid->count = 0;
    grid->overflow_count = 0;
    grid->entry_count = 0;
    grid->built = 0;
    grid->counts = COUNTS_RESET;
}

uint32_t cradle_grid_count(const cradle_grid *grid) { return grid->count; }
uint32_t cradle_grid_overflow_count(const cradle_grid *grid) { return grid->overflow_count; }

/* w, h >= 0 and x + w, y + h fit in int32 (INT32_MAX - w cannot overflow
 * once w >= 0). */
static inline bool box_valid(cradle_box b) {
    return (b.w | b.h) >= 0 && b.x <= INT32_MAX - b.w && b.y <= INT32_MAX - b.h;
}

bool cradle_box_overlap(cradle_box a, cradle_box b) {
    /* Non-empty half-open intervals overlap with positive length iff each
     * starts before the other ends. */
    if (a.w <= 0 || a.h <= 0 || b.w <= 0 || b.h <= 0) return false;
    return (int64_t)a.x < (int64_t)b.x + b.w && (int64_t)b.x < (int64_t)a.x + a.w &&
           (int64_t)a.y < (int64_t)b.y + b.h && (int64_t)b.y < (int64_t)a.y + a.h;
}

/* Cell column (or row) of offset d = coordinate - origin, clamped to 0..n-1.
 * Coordinate and origin are int32, so |d| < 2^32. A quotient past the last
 * cell clamps to it (d >= n * cell_size exactly when d / cell_size >= n), so
 * no bound needs computing. Written as selects, which compile to
 * conditional moves: whether an object sticks out is data, not pattern. */
static inline uint32_t shift_cell(int64_t d, uint32_t shift, uint32_t n) {
    uint64_t q = d < 0 ? 0u : (uint64_t)d >> shift;
    return q < n ? (uint32_t)q : n - 1u;
}

/* The same for a cell size that is not a power of two: d < 2^32, so a
 * 32-bit division does (several times cheaper than a 64-bit one). */
static inline uint32_t divide_cell(int64_t d, uint32_t cell_size, uint32_t n) {
    if (d < 0) return 0;
    uint32_t q = (uint32_t)d / cell_size;
    return q < n ? q : n - 1u;
}

typedef struct cell_range {
    uint32_t cx0, cy0, cx1, cy1;
} cell_range;

/* Cells a non-empty valid box covers; its last covered coordinate is x+w-1.
 * A power-of-two cell size (cell_shift) shifts instead of dividing: four
 * divisions of tens of cycles each were most of an insert's cost. */
static inline cell_range range_of(const cradle_grid *grid, cradle_box b) {
    int64_t dx = (int64_t)b.x - grid->x, dy = (int64_t)b.y - grid->y;
    int64_t ex = dx + b.w - 1, ey = dy + b.h - 1;
    uint32_t cols = grid->columns, rows = grid->rows;
    if (grid->cell_shift != NO_SHIFT) {
        uint32_t s = grid->cell_shift;
        return (cell_range){shift_cell(dx, s, cols), shift_cell(dy, s, rows),
                            shift_cell(ex, s, cols), shift_cell(ey, s, rows)};
    }
    uint32_t cs = (uint32_t)grid->cell_size;
    return (cell_range){divide_cell(dx, cs, cols), divide_cell(dy, cs, rows),
                        divide_cell(ex, cs, cols), divide_cell(ey, cs, rows)};
}

/* Counts an inserted object's cells into cell_start (COUNTS_ON) or leaves
 * the counting to build() (COUNTS_STALE). Objects of up to 2 x 2 cells, the
 * common case, are counted in insert() itself. */
static void count_cells(cradle_grid *grid, cell_range r) {
    uint32_t *start = cell_start(grid);
    if (grid->counts == COUNTS_STALE) return;
    if (grid->counts == COUNTS_RESET) {
        memset(start, 0, sizeof(uint32_t) * ((size_t)grid->cells + 1u));
        grid->counts = COUNTS_ON;
    }
    uint32_t cols = grid->columns;
    for (uint32_t cy = r.cy0; cy <= r.cy1; cy++)
        for (uint32_t cx = r.cx0; cx <= r.cx1; cx++) start[cy * cols + cx]++;
}

int cradle_grid_insert(cradle_grid *grid, uint32_t id, cradle_box box, uint32_t layer,
                       uint32_t mask) {
    if (!box_valid(box)) return CRADLE_EINVAL;
    uint32_t n = grid->count;
    if (n >= grid->max_objects) return CRADLE_EFULL;
    grid->count = n + 1u;
    grid->built = 0;
    grid_hot *h = &hot(grid)[n];
    grid_cold *c = &cold(grid)[n];
    /* x + w fits in int32: box_valid checked it. */
    if (box.w == 0 || box.h == 0) {
        *h = (grid_hot){.x0 = box.x, .y0 = box.y, .x1 = box.x + box.w, .y1 = box.y + box.h,
                        .layer = layer, .mask = mask};
        *c = (grid_cold){.id = id, .flags = OBJECT_EMPTY};
        return 0;
    }
    cell_range r = range_of(grid, box);
    *h = (grid_hot){.x0 = box.x, .y0 = box.y, .x1 = box.x + box.w, .y1 = box.y + box.h,
                    .layer = layer, .mask = mask, .cx0 = r.cx0, .cy0 = r.cy0};
    *c = (grid_cold){.id = id, .cx1 = r.cx1, .cy1 = r.cy1};
    uint32_t sx = r.cx1 - r.cx0, sy = r.cy1 - r.cy0;
    if ((sx | sy) <= 1u && grid->counts == COUNTS_ON) {
        /* The common case, an object no larger than a cell: 1, 2 or 4 cells,
         * counted without branching on which (the object's position relative
         * to the cell borders is data, not a pattern a predictor learns). A
         * cell counted twice gets + 0 the second time. */
        uint32_t covered = (sx + 1u) * (sy + 1u);
        if (covered <= grid->large_cells && covered <= grid->max_entries - grid->entry_count) {
            uint32_t *start = cell_start(grid);
            uint32_t row0 = r.cy0 * grid->columns, row1 = r.cy1 * grid->columns;
            grid->entry_count += covered;
            start[row0 + r.cx0]++;
            start[row0 + r.cx1] += sx;
            start[row1 + r.cx0] += sy;
            start[row1 + r.cx1] += sx & sy;
            return 0;
        }
    }
    uint64_t covered = (uint64_t)(r.cx1 - r.cx0 + 1u) * (r.cy1 - r.cy0 + 1u);
    if (covered > grid->large_cells || grid->entry_count + covered > grid->max_entries) {
        c->flags = OBJECT_OVERFLOW;
        overflow(grid)[grid->overflow_count++] = n;
        return 0;
    }
    grid->entry_count += (uint32_t)covered;
    count_cells(grid, r);
    return 0;
}

/* Counting sort of the grid objects into the cells. Objects are placed in
 * reverse insertion order at decreasing positions, so every cell list ends up
 * ascending by object number. */
static void build(cradle_grid *grid) {
    if (grid->built) return;
    uint32_t *start = cell_start(grid);
    uint32_t *entry = entries(grid);
    const grid_hot *h = hot(grid);
    const grid_cold *c = cold(grid);
    uint32_t cols = grid->columns;
    if (grid->counts != COUNTS_ON) {
        memset(start, 0, sizeof(uint32_t) * ((size_t)grid->cells + 1u));
        for (uint32_t i = 0; i < grid->count; i++) {
            if (c[i].flags) continue;
            for (uint32_t cy = h[i].cy0; cy <= c[i].cy1; cy++)
                for (uint32_t cx = h[i].cx0; cx <= c[i].cx1; cx++) start[cy * cols + cx]++;
        }
    }
    uint32_t sum = 0;
    for (uint32_t k = 0; k < grid->cells; k++) {
        sum += start[k];
        start[k] = sum; /* end of cell k for now */
    }
    start[grid->cells] = sum;
    assert(sum == grid->entry_count);
    for (uint32_t i = grid->count; i-- > 0;) {
        if (c[i].flags) continue;
        uint32_t cx0 = h[i].cx0, cy0 = h[i].cy0, cx1 = c[i].cx1, cy1 = c[i].cy1;
        uint32_t sx = cx1 - cx0, sy = cy1 - cy0;
        if ((sx | sy) <= 1u) {
            /* Up to 2 x 2 cells without branching, as in insert(): a cell
             * met again is not decremented again, and the object is written
             * once more into the slot it just took. */
            uint32_t row0 = cy0 * cols, row1 = cy1 * cols, p;
            p = --start[row0 + cx0];
            entry[p] = i;
            p = start[row0 + cx1] - sx;
            start[row0 + cx1] = p;
            entry[p] = i;
            p = start[row1 + cx0] - sy;
            start[row1 + cx0] = p;
            entry[p] = i;
            p = start[row1 + cx1] - (sx & sy);
            start[row1 + cx1] = p;
            entry[p] = i;
            continue;
        }
        for (uint32_t cy = cy0; cy <= cy1; cy++)
            for (uint32_t cx = cx0; cx <= cx1; cx++) entry[--start[cy * cols + cx]] = i;
    }
    grid->built = 1;
    grid->counts = COUNTS_STALE;
}

/* Both objects non-empty. */
static bool collide(const grid_hot *a, const grid_hot *b) {
    return ((a->mask & b->layer) != 0 || (b->mask & a->layer) != 0) && a->x0 < b->x1 &&
           b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

static uint32_t max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }

/* In-place heapsort: no allocation (glibc's qsort may call malloc), and the
 * keys are distinct so the result does not depend on stability. */
static void sift_down(uint32_t *v, uint32_t root, uint32_t n) {
    for (;;) {
        uint32_t child = 2u * root + 1u;
        if (child >= n) return;
        if (child + 1u < n && v[child + 1u] > v[child]) child++;
        if (v[root] >= v[child]) return;
        uint32_t t = v[root];
        v[root] = v[child];
        v[child] = t;
        root = child;
    }
}

static void sort_u32(uint32_t *v, uint32_t n) {
    if (n <= 32) {
        for (uint32_t i = 1; i < n; i++) {
            uint32_t x = v[i], j = i;
            for (; j > 0 && v[j - 1] > x; j--) v[j] = v[j - 1];
            v[j] = x;
        }
        return;
    }
    for (uint32_t i = n / 2u; i-- > 0;) sift_down(v, i, n);
    for (uint32_t end = n - 1u; end > 0; end--) {
        uint32_t t = v[0];
        v[0] = v[end];
        v[end] = t;
        sift_down(v, 0, end);
    }
}

/* ---- slow path: object by object --------------------------------------- */

/* Partners of object i with a larger number, ascending, into scratch. */
static uint32_t partners(const cradle_grid *grid, uint32_t i) {
    const grid_hot *h = hot(grid);
    const grid_cold *c = cold(grid);
    const grid_hot *a = &h[i];
    uint32_t *out = scratch(grid);
    uint32_t k = 0;
    if (c[i].flags & OBJECT_EMPTY) return 0;
    if (c[i].flags & OBJECT_OVERFLOW) {
        /* Tested against everything after it, already in ascending order. */
        for (uint32_t j = i + 1u; j < grid->count; j++) {
            if (!(c[j].flags & OBJECT_EMPTY) && collide(a, &h[j])) out[k++] = j;
        }
        return k;
    }
    const uint32_t *start = cell_start(grid);
    const uint32_t *entry = entries(grid);
    for (uint32_t cy = a->cy0; cy <= c[i].cy1; cy++) {
        for (uint32_t cx = a->cx0; cx <= c[i].cx1; cx++) {
            uint32_t cell = cy * grid->columns + cx;
            for (uint32_t e = start[cell]; e < start[cell + 1u]; e++) {
                uint32_t j = entry[e];
                if (j <= i) continue;
                const grid_hot *b = &h[j];
                if (max_u32(a->cx0, b->cx0) != cx || max_u32(a->cy0, b->cy0) != cy) continue;
                if (collide(a, b)) out[k++] = j;
            }
        }
    }
    const uint32_t *over = overflow(grid);
    for (uint32_t v = 0; v < grid->overflow_count; v++) {
        uint32_t j = over[v];
        if (j > i && collide(a, &h[j])) out[k++] = j;
    }
    sort_u32(out, k);
    return k;
}

static uint32_t pairs_by_object(const cradle_grid *grid, cradle_grid_pair *out, uint32_t capacity,
                                uint32_t *lost) {
    const grid_cold *c = cold(grid);
    const uint32_t *found = scratch(grid);
    uint32_t stored = 0;
    *lost = 0;
    for (uint32_t i = 0; i < grid->count; i++) {
        uint32_t k = partners(grid, i);
        for (uint32_t p = 0; p < k; p++) {
            if (stored < capacity) {
                out[stored++] = (cradle_grid_pair){.a = c[i].id, .b = c[found[p]].id};
            } else {
                (*lost)++;
            }
        }
    }
    return stored;
}

/* ---- fast path: cell by cell, then sort the keys ------------------------ */

/* Collects every colliding pair as a key (first << key_bits | second) into
 * keys(); returns the count, or UINT32_MAX when more than max_pairs. */
static uint32_t collect_keys(const cradle_grid *grid) {
    const grid_hot *h = hot(grid);
    const grid_cold *c = cold(grid);
    const uint32_t *start = cell_start(grid);
    const uint32_t *entry = entries(grid);
    uint64_t *key = keys(grid);
    uint32_t bits = grid->key_bits, max = grid->max_pairs, n = 0;
    for (uint32_t cy = 0, cell = 0; cy < grid->rows; cy++) {
        for (uint32_t cx = 0; cx < grid->columns; cx++, cell++) {
            uint32_t end = start[cell + 1u];
            for (uint32_t e = start[cell]; e + 1u < end; e++) {
                uint32_t i = entry[e];
                const grid_hot a = h[i];
                uint64_t first = (uint64_t)i << bits;
                for (uint32_t f = e + 1u; f < end; f++) {
                    uint32_t j = entry[f]; /* > i: cell lists ascend */
                    const grid_hot *b = &h[j];
                    /* Branch-free: whether a candidate collides is close to a
                     * coin toss, which a branch predictor cannot learn. */
                    unsigned ok = (unsigned)(max_u32(a.cx0, b->cx0) == cx) &
                                  (unsigned)(max_u32(a.cy0, b->cy0) == cy) &
                                  (unsigned)(((a.mask & b->layer) | (b->mask & a.layer)) != 0) &
                                  (unsigned)(a.x0 < b->x1) & (unsigned)(b->x0 < a.x1) &
                                  (unsigned)(a.y0 < b->y1) & (unsigned)(b->y0 < a.y1);
                    if (n == max) {
                        if (ok) return UINT32_MAX;
                        continue;
                    }
                    key[n] = first | j;
                    n += ok;
                }
            }
        }
    }
    const uint32_t *over = overflow(grid);
    for (uint32_t v = 0; v < grid->overflow_count; v++) {
        uint32_t o = over[v];
        for (uint32_t j = 0; j < grid->count; j++) {
            /* overflow-overflow pairs once, from the earlier one */
            if (j == o || (c[j].flags & OBJECT_EMPTY)) continue;
            if ((c[j].flags & OBJECT_OVERFLOW) && j < o) continue;
            if (!collide(&h[o], &h[j])) continue;
            if (n == max) return UINT32_MAX;
            key[n++] = o < j ? (uint64_t)o << bits | j : (uint64_t)j << bits | o;
        }
    }
    return n;
}

/* LSD radix sort of n keys of 2 * key_bits bits, 8 bits a pass; returns the
 * buffer holding the sorted keys (keys() or keys_tmp()). */
static const uint64_t *radix_sort(const cradle_grid *grid, uint32_t n) {
    uint64_t *from = keys(grid), *to = keys_tmp(grid);
    uint32_t passes = (2u * grid->key_bits + 7u) / 8u;
    for (uint32_t pass = 0; pass < passes; pass++) {
        uint32_t shift = 8u * pass;
        uint32_t count[257] = {0};
        for (uint32_t k = 0; k < n; k++) count[((from[k] >> shift) & 0xFFu) + 1u]++;
        if (count[((from[0] >> shift) & 0xFFu) + 1u] == n) continue; /* one digit: already in order */
        for (uint32_t d = 0; d < 256; d++) count[d + 1u] += count[d];
        for (uint32_t k = 0; k < n; k++) to[count[(from[k] >> shift) & 0xFFu]++] = from[k];
        uint64_t *t = from;
        from = to;
        to = t;
    }
    return from;
}

uint32_t cradle_grid_pairs(cradle_grid *grid, cradle_grid_pair *out, uint32_t capacity,
                           uint32_t *dropped) {
    assert(out != NULL || capacity == 0);
    build(grid);
    uint32_t lost = 0, stored = 0;
    uint32_t n = collect_keys(grid);
    if (n == UINT32_MAX) {
        stored = pairs_by_object(grid, out, capacity, &lost);
    } else if (n > 0) {
        const uint64_t *sorted = radix_sort(grid, n);
        const grid_cold *c = cold(grid);
        uint64_t low = ((uint64_t)1 << grid->key_bits) - 1u;
        stored = n < capacity ? n : capacity;
        for (uint32_t k = 0; k < stored; k++) {
            out[k] = (cradle_grid_pair){.a = c[sorted[k] >> grid->key_bits].id,
                                        .b = c[sorted[k] & low].id};
        }
        lost = n - stored;
    }
    if (dropped) *dropped = lost;
    return stored;
}

uint32_t cradle_grid_query(cradle_grid *grid, cradle_box box, uint32_t mask, uint32_t *out,
                           uint32_t capacity, uint32_t *dropped) {
    assert(out != NULL || capacity == 0);
    if (dropped) *dropped = 0;
    if (!box_valid(box) || box.w == 0 || box.h == 0) return 0;
    build(grid);
    const grid_hot *h = hot(grid);
    const grid_cold *c = cold(grid);
    uint32_t *found = scratch(grid);
    uint32_t k = 0;
    cell_range r = range_of(grid, box);
    const grid_hot q = {.x0 = box.x, .y0 = box.y, .x1 = box.x + box.w, .y1 = box.y + box.h,
                        .mask = mask};
    const uint32_t *start = cell_start(grid);
    const uint32_t *entry = entries(grid);
    for (uint32_t cy = r.cy0; cy <= r.cy1; cy++) {
        for (uint32_t cx = r.cx0; cx <= r.cx1; cx++) {
            uint32_t cell = cy * grid->columns + cx;
            uint32_t e = start[cell], end = start[cell + 1u];
            /* Branch-free while found[] cannot overrun (each candidate is
             * written, and kept only when it matches): a match is rare and
             * unpredictable, a mispredicted branch costs more than the store. */
            if (end - e <= grid->max_objects - k) {
                for (; e < end; e++) {
                    uint32_t j = entry[e];
                    const grid_hot *b = &h[j];
                    unsigned ok = (unsigned)(max_u32(r.cx0, b->cx0) == cx) &
                                  (unsigned)(max_u32(r.cy0, b->cy0) == cy) &
                                  (unsigned)((mask & b->layer) != 0) &
                                  (unsigned)(q.x0 < b->x1) & (unsigned)(b->x0 < q.x1) &
                                  (unsigned)(q.y0 < b->y1) & (unsigned)(b->y0 < q.y1);
                    found[k] = j;
                    k += ok;
                }
                continue;
            }
            for (; e < end; e++) {
                const grid_hot *b = &h[entry[e]];
                if (max_u32(r.cx0, b->cx0) != cx || max_u32(r.cy0, b->cy0) != cy) continue;
                /* q.layer is 0, so collide() is the one-sided test mask & layer. */
                if (collide(&q, b)) found[k++] = entry[e];
            }
        }
    }
    const uint32_t *over = overflow(grid);
    for (uint32_t v = 0; v < grid->overflow_count; v++) {
        if (collide(&q, &h[over[v]])) found[k++] = over[v];
    }
    sort_u32(found, k);
    uint32_t stored = k < capacity ? k : capacity;
    for (uint32_t p = 0; p < stored; p++) out[p] = c[found[p]].id;
    if (dropped) *dropped = k - stored;
    return stored;
}
