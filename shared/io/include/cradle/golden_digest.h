#ifndef CRADLE_GOLDEN_DIGEST_H
#define CRADLE_GOLDEN_DIGEST_H
/*
 * golden_digest: a golden file that holds digests of a replay's output
 * rather than the output itself, one per window of W steps, so a long
 * session's reference costs tens of bytes per window instead of the game's
 * output size per step (vanguard: 77 bytes a step, which compresses to
 * about 10). The full golden file (golden.h) is still the kind that names
 * the byte; this one names the first window that differs.
 *
 * A window's digest is BLAKE2b-128 (libsodium's crypto_generichash with a
 * 16-byte output, no key) of the output bytes of its steps laid end to end,
 * the same as `cradle-replay --from A --to B --output - LOG | b2sum -l 128`.
 * Like the full golden file it holds the bytes, not where each step's
 * output ends.
 *
 * FORMAT (version 1): text, every line ending in "\n", in this order:
 *
 *     cradle-golden-digest 1          the magic line, which tells the kind
 *     game vanguard                   the game's name (1..31 printable ASCII)
 *     hash blake2b-128                the only hash version 1 knows
 *     window 250                      W: steps per window, 1..2^32-1
 *     from 0                          the first step whose output it covers
 *     steps 12000                     N: steps covered, from .. from+N-1
 *     bytes 924000                    output bytes of those steps
 *     windows 48                      ceil(N / W)
 *     0 9f86d081884c7d659a2feaa0c55ad015     a window: its first step and
 *     250 1a...                              its digest in lowercase hex;
 *     ...                                    the last may be shorter than W
 *     end
 *
 * Numbers are decimal without leading zeros, so a file has one spelling
 * and whatever parses formats back to the same bytes. The file is outside
 * input (it is committed and edited by people): the parser checks every
 * line and field, their order and their consistency, and refuses with a
 * message naming the line and the field; it never reads past size.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sodium/crypto_generichash.h>

#include "cradle/errors.h"
#include "cradle/game_abi.h"

#define CRADLE_GOLDEN_DIGEST_BYTES 16u /* BLAKE2b-128 */
#define CRADLE_GOLDEN_DIGEST_MAGIC "cradle-golden-digest 1\n"
#define CRADLE_GOLDEN_DIGEST_WINDOW_MAX UINT32_MAX
#define CRADLE_GOLDEN_DIGEST_MESSAGE_MAX 256u
/* The shortest window line: "0 " and 32 hex digits and "\n". */
#define CRADLE_GOLDEN_DIGEST_LINE_MIN (2u + 2u * CRADLE_GOLDEN_DIGEST_BYTES + 1u)

typedef uint8_t cradle_golden_digest_value[CRADLE_GOLDEN_DIGEST_BYTES];

/* A parsed (or to be formatted) digest golden file. `digests` is the
 * caller's: `windows` entries, window i covering steps from + i * window ..
 * min(from + (i + 1) * window, from + steps) - 1. */
typedef struct cradle_golden_digest {
    char game[CRADLE_GAME_NAME_MAX + 1];
    uint64_t window;
    uint64_t from;
    uint64_t steps;
    uint64_t bytes;
    uint64_t windows;
    cradle_golden_digest_value *digests;
} cradle_golden_digest;

/* Whether bytes start with the magic line: a digest golden file rather than
 * a full one. (A full golden file is whatever the game wrote: one whose
 * output began with these 23 bytes would be read, and refused, as a damaged
 * digest file.) */
bool cradle_golden_digest_is(const void *bytes, size_t size);

/* The most windows a file of size bytes can hold: a parse buffer of this
 * many digests is always large enough. */
size_t cradle_golden_digest_capacity(size_t size);

/* Parses size bytes into *d, its digests into the caller's `digests`
 * (capacity entries; cradle_golden_digest_capacity(size) always suffices).
 * Returns 0, or CRADLE_EGOLDEN_DIGEST with message naming the line and the
 * field ("line 4: window '0' is not 1..4294967295") or the inconsistency. */
CRADLE_MUST_CHECK int cradle_golden_digest_parse(cradle_golden_digest *d, const uint8_t *bytes, size_t size,
                                                 cradle_golden_digest_value *digests, size_t capacity,
                                                 char *message, size_t message_size);

/* Writes d as the file's text into out, at most capacity bytes and no NUL,
 * and returns the text's length: the text is complete when that is <=
 * capacity (call with capacity 0 to size the buffer). d must
 * be consistent (windows = ceil(steps / window), 1 <= window <= max, a
 * valid game name): a programmer's error otherwise (asserts). */
size_t cradle_golden_digest_format(const cradle_golden_digest *d, char *out, size_t capacity);

/* The steps of window i of d (i < d->windows): first and last inclusive. */
void cradle_golden_digest_window_steps(const cradle_golden_digest *d, uint64_t i, uint64_t *first,
                                       uint64_t *last);

/* ---- computing the digests -------------------------------------------- */

/* Cuts a stream of step outputs into windows and digests each. The caller
 * owns it; init, then add every step's output in step order. */
typedef struct cradle_golden_digester {
    crypto_generichash_state hash; /* the open window's */
    uint64_t window, from;
    uint64_t steps;                /* steps added */
    uint64_t bytes;                /* output bytes added */
    uint64_t windows;              /* windows closed */
    uint64_t open_steps;           /* steps in the open window */
} cradle_golden_digester;

void cradle_golden_digester_init(cradle_golden_digester *g, uint64_t window, uint64_t from);

/* Adds the output of step (which must be from + the steps added so far: a
 * programmer's error otherwise). Returns true when the step closed window
 * g->windows - 1, whose digest is then in *digest. */
bool cradle_golden_digester_add(cradle_golden_digester *g, uint64_t step, const void *output, size_t size,
                                cradle_golden_digest_value *digest);

/* Closes the open, shorter window at the end of the output. Returns true
 * with its digest in *digest when one was open. */
bool cradle_golden_digester_finish(cradle_golden_digester *g, cradle_golden_digest_value *digest);

#endif
