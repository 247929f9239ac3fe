#include "digest_golden.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int digest_golden_check(digest_golden *g, const uint8_t *bytes, size_t size, const char *game, uint64_t from,
                        char *message, size_t message_size) {
    memset(g, 0, sizeof *g);
    g->capacity = cradle_golden_digest_capacity(size);
    g->digests = malloc((g->capacity ? g->capacity : 1) * sizeof *g->digests);
    if (!g->digests) {
        snprintf(message, message_size, "out of memory for %zu digests", g->capacity);
        return -1;
    }
    char why[CRADLE_GOLDEN_DIGEST_MESSAGE_MAX];
    if (cradle_golden_digest_parse(&g->golden, bytes, size, g->digests, g->capacity, why, sizeof why) != 0) {
        snprintf(message, message_size, "%s", why);
        return -1;
    }
    if (strcmp(g->golden.game, game) != 0) {
        snprintf(message, message_size, "its game is '%s', the replay runs '%s'", g->golden.game, game);
        return -1;
    }
    if (g->golden.from != from) {
        snprintf(message, message_size,
                 "it covers the output from step %" PRIu64 ", the replay's starts at step %" PRIu64
                 " (give --from %" PRIu64 ")", g->golden.from, from, g->golden.from);
        return -1;
    }
    cradle_golden_digester_init(&g->digester, g->golden.window, from);
    g->checking = true;
    return 0;
}

void digest_golden_bless(digest_golden *g, uint64_t window, uint64_t from) {
    memset(g, 0, sizeof *g);
    cradle_golden_digester_init(&g->digester, window, from);
    g->blessing = true;
}

/* The first difference: at `step`, in the golden file's window that holds
 * it (or just past its last window). */
static void differ(digest_golden *g, digest_why why, uint64_t step) {
    const cradle_golden_digest *d = &g->golden;
    g->why = why;
    g->step = step;
    g->window = (step - d->from) / d->window;
    if (g->window < d->windows) {
        cradle_golden_digest_window_steps(d, g->window, &g->first, &g->last);
    } else {
        g->first = g->last = step;
    }
}

/* A window closed: kept for --bless, compared for --golden. */
static int closed(digest_golden *g, const uint8_t *digest) {
    uint64_t i = g->digester.windows - 1;
    if (g->blessing) {
        if (i >= g->capacity) {
            size_t more = g->capacity ? 2 * g->capacity : 256;
            cradle_golden_digest_value *grown = realloc(g->digests, more * sizeof *grown);
            if (!grown) return -1;
            g->digests = grown;
            g->capacity = more;
        }
        memcpy(g->digests[i], digest, CRADLE_GOLDEN_DIGEST_BYTES);
        return 0;
    }
    /* Steps never outrun the file's (take stops there), so window i is the
     * file's window i, of the same steps. */
    if (memcmp(g->digests[i], digest, CRADLE_GOLDEN_DIGEST_BYTES) != 0) {
        differ(g, DIGEST_DIFFERS, g->digester.from + i * g->digester.window);
        memcpy(g->ours, digest, CRADLE_GOLDEN_DIGEST_BYTES);
    }
    return 0;
}

int digest_golden_take(digest_golden *g, uint64_t step, const uint8_t *output, size_t size) {
    if (g->why != DIGEST_SAME) return 0; /* the first difference is found */
    if (g->checking && g->digester.steps == g->golden.steps) {
        differ(g, DIGEST_GOES_ON, step);
        return 0;
    }
    cradle_golden_digest_value digest;
    return cradle_golden_digester_add(&g->digester, step, output, size, &digest) ? closed(g, digest) : 0;
}

int digest_golden_finish(digest_golden *g) {
    if (g->why != DIGEST_SAME) return 0;
    if (g->checking && g->digester.steps < g->golden.steps) {
        differ(g, DIGEST_ENDS_EARLY, g->digester.from + g->digester.steps);
        return 0;
    }
    cradle_golden_digest_value digest;
    if (cradle_golden_digester_finish(&g->digester, &digest) && closed(g, digest) != 0) return -1;
    if (g->checking && g->why == DIGEST_SAME && g->digester.bytes != g->golden.bytes)
        g->why = DIGEST_BYTES;
    return 0;
}

char *digest_golden_text(const digest_golden *g, const char *game, size_t *size) {
    const cradle_golden_digester *s = &g->digester;
    cradle_golden_digest d = {.window = s->window, .from = s->from, .steps = s->steps, .bytes = s->bytes,
                              .windows = s->windows, .digests = g->digests};
    snprintf(d.game, sizeof d.game, "%s", game);
    size_t n = cradle_golden_digest_format(&d, NULL, 0);
    char *text = malloc(n);
    if (text) *size = cradle_golden_digest_format(&d, text, n);
    return text;
}

static void print_hex(FILE *to, const uint8_t *v) {
    for (unsigned i = 0; i < CRADLE_GOLDEN_DIGEST_BYTES; i++) fprintf(to, "%02x", v[i]);
}

void digest_golden_print(const digest_golden *g, FILE *to, const char *log) {
    const cradle_golden_digest *d = &g->golden;
    uint64_t end = d->from + d->steps - 1; /* the golden file's last step, when it has steps */
    switch (g->why) {
    case DIGEST_SAME: return;
    case DIGEST_BYTES:
        fprintf(to, "cradle-replay: every window's digest agrees, but the output has %" PRIu64
                " bytes and the golden file says %" PRIu64 ": was the file edited?\n", g->digester.bytes, d->bytes);
        return;
    case DIGEST_ENDS_EARLY:
        fprintf(to, "cradle-replay: first difference at step %" PRIu64 ", in window %" PRIu64 " (steps %" PRIu64
                "..%" PRIu64 "): the output ends there, the golden file goes on to step %" PRIu64 "\n",
                g->step, g->window, g->first, g->last, end);
        return;
    case DIGEST_GOES_ON:
        if (d->steps == 0) {
            fprintf(to, "cradle-replay: first difference at step %" PRIu64 ": the golden file holds no steps\n",
                    g->step);
            return;
        }
        fprintf(to, "cradle-replay: first difference at step %" PRIu64 ": the output goes on past step %" PRIu64
                ", the golden file's last (window %" PRIu64 ")\n", g->step, end, d->windows ? d->windows - 1 : 0);
        return;
    case DIGEST_DIFFERS:
        fprintf(to, "cradle-replay: first difference in window %" PRIu64 " of %" PRIu64 " (steps %" PRIu64
                "..%" PRIu64 "): digest ", g->window, d->windows, g->first, g->last);
        print_hex(to, d->digests[g->window]);
        fprintf(to, " in the golden file, ");
        print_hex(to, g->ours);
        fprintf(to, " in the replay\n");
        fprintf(to, "  a digest golden file names the window, not the step: write those steps' output with this "
                "build and with the last one that matched\n  (cradle-replay --from %" PRIu64 " --to %" PRIu64
                " --output FILE %s) and compare the two files (cmp -l)\n", g->first, g->last, log);
        return;
    }
}

void digest_golden_close(digest_golden *g) {
    free(g->digests);
    g->digests = NULL;
}
