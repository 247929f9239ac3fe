#ifndef CRADLE_TOOLS_DIGEST_GOLDEN_H
#define CRADLE_TOOLS_DIGEST_GOLDEN_H
/*
 * digest_golden: cradle-replay's --golden with a digest golden file and
 * --bless FILE --digest W (cradle/golden_digest.h). The replay's output is
 * cut into windows of W steps; each window's BLAKE2b-128 is compared with
 * the file's, or kept for the file --bless writes.
 *
 * A difference names the first window that differs and its steps. Where
 * the output is shorter or longer than the golden file's steps it names the
 * exact step; inside a window whose digest differs it cannot (the file has
 * no bytes to compare), and the printed difference says how to find it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cradle/golden_digest.h"

typedef enum digest_why {
    DIGEST_SAME,
    DIGEST_DIFFERS,    /* the window's digest differs */
    DIGEST_ENDS_EARLY, /* the output ends at `step`, before the golden file's last step */
    DIGEST_GOES_ON,    /* the output goes on at `step`, past the golden file's last step */
    DIGEST_BYTES,      /* every digest agrees but the byte count the file states does not */
} digest_why;

typedef struct digest_golden {
    bool checking, blessing;
    cradle_golden_digest golden;          /* --golden: the file */
    cradle_golden_digest_value *digests;  /* --golden: its digests; --bless: ours so far (malloc'd) */
    size_t capacity;
    cradle_golden_digester digester;
    /* the first difference */
    digest_why why;
    uint64_t window, first, last;         /* the window and its steps (the golden file's) */
    uint64_t step;                        /* DIGEST_ENDS_EARLY, DIGEST_GOES_ON */
    cradle_golden_digest_value ours;      /* DIGEST_DIFFERS: the replay's digest of the window */
} digest_golden;

/* --golden: reads the file's bytes for a replay of `game` whose output
 * starts at step `from`. Returns 0, or -1 with message naming the line and
 * the field, or the game or first step that does not match. */
int digest_golden_check(digest_golden *g, const uint8_t *bytes, size_t size, const char *game, uint64_t from,
                        char *message, size_t message_size);

/* --bless --digest window: starts collecting digests from step `from`. */
void digest_golden_bless(digest_golden *g, uint64_t window, uint64_t from);

/* One step's output. Returns 0, or -1 when out of memory. */
int digest_golden_take(digest_golden *g, uint64_t step, const uint8_t *output, size_t size);

/* After the last step: closes the last window; compares the lengths.
 * Returns 0, or -1 when out of memory. */
int digest_golden_finish(digest_golden *g);

/* --bless: the file's text for `game` (malloc'd, *size bytes), or NULL
 * when out of memory. */
char *digest_golden_text(const digest_golden *g, const char *game, size_t *size);

/* Prints the first difference (stderr lines, "cradle-replay: " first). */
void digest_golden_print(const digest_golden *g, FILE *to, const char *log);

void digest_golden_close(digest_golden *g);

#endif
