/*
 * golden_digest: the digest golden file (format in golden_digest.h): its
 * strict parser, its writer and the windowed BLAKE2b-128 that fills it.
 */
#include "cradle/golden_digest.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "cradle/internal.h"
#include "cradle/lines.h"
#include "cradle/parse.h"

#define LINE_MAX_BYTES 128u /* longer than any line a valid file has */
#define MAGIC_BYTES (sizeof CRADLE_GOLDEN_DIGEST_MAGIC - 1u)

_Static_assert(CRADLE_GOLDEN_DIGEST_BYTES >= crypto_generichash_BYTES_MIN &&
                   CRADLE_GOLDEN_DIGEST_BYTES <= crypto_generichash_BYTES_MAX,
               "BLAKE2b's output length");

bool cradle_golden_digest_is(const void *bytes, size_t size) {
    return bytes && size >= MAGIC_BYTES && memcmp(bytes, CRADLE_GOLDEN_DIGEST_MAGIC, MAGIC_BYTES) == 0;
}

size_t cradle_golden_digest_capacity(size_t size) { return size / CRADLE_GOLDEN_DIGEST_LINE_MIN; }

void cradle_golden_digest_window_steps(const cradle_golden_digest *d, uint64_t i, uint64_t *first,
                                       uint64_t *last) {
    assert(d && first && last && i < d->windows);
    uint64_t offset = i * d->window; /* < steps: no overflow */
    uint64_t length = d->steps - offset < d->window ? d->steps - offset : d->window;
    *first = d->from + offset;
    *last = *first + length - 1u;
}

/* ---- parsing ------------------------------------------------------------ */

typedef struct reader {
    cradle_lines in;
    char text[LINE_MAX_BYTES + 1];
    char *message;
    size_t message_size;
} reader;

#define REFUSE(r, ...) cradle__say(CRADLE_EGOLDEN_DIGEST, (r)->message, (r)->message_size, __VA_ARGS__)

/* The next line into r->text, without its newline. `what` names the line
 * expected, for a file that ends before it. */
static int next_line(reader *r, const char *what) {
    uint8_t bad = 0;
    switch (cradle_lines_next(&r->in, r->text, LINE_MAX_BYTES, &bad)) {
    case CRADLE_LINE_OK: return CRADLE_OK;
    case CRADLE_LINE_END: return REFUSE(r, "line %u: the file ends before %s", r->in.line, what);
    case CRADLE_LINE_UNTERMINATED:
        return REFUSE(r, "line %u: the file ends inside %s, without its newline", r->in.line, what);
    case CRADLE_LINE_LONG: return REFUSE(r, "line %u: longer than %u bytes", r->in.line, LINE_MAX_BYTES);
    case CRADLE_LINE_BYTE: break;
    }
    return REFUSE(r, "line %u: byte 0x%02x is not printable ASCII", r->in.line, bad);
}

/* A decimal number in its one spelling: digits, no leading zero. */
static bool canonical_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out) {
    if (s[0] == '0' && s[1] != '\0') return false;
    return cradle_parse_u64(s, min, max, out);
}

/* "key value": returns the value, or NULL when the line is not that key's. */
static const char *value_of(const reader *r, const char *key) {
    size_t k = strlen(key);
    return strncmp(r->text, key, k) == 0 && r->text[k] == ' ' ? r->text + k + 1 : NULL;
}

/* One "key <number>" line with the number in [min, max]. */
static int read_number(reader *r, const char *key, uint64_t min, uint64_t max, uint64_t *out) {
    int rc = next_line(r, key);
    if (rc != CRADLE_OK) return rc;
    const char *v = value_of(r, key);
    if (!v) return REFUSE(r, "line %u: expected \"%s <number>\", got \"%s\"", r->in.line, key, r->text);
    if (!canonical_u64(v, min, max, out))
        return REFUSE(r, "line %u: %s '%s' is not %" PRIu64 "..%" PRIu64 " in decimal without leading zeros",
                      r->in.line, key, v, min, max);
    return CRADLE_OK;
}

/* The magic, game and hash lines. */
static int read_identity(reader *r, cradle_golden_digest *d) {
    if (!cradle_golden_digest_is(r->in.bytes, r->in.size))
        return REFUSE(r, "line 1: not a digest golden file (it does not start with \"cradle-golden-digest 1\")");
    int rc = next_line(r, "the magic line");
    if (rc != CRADLE_OK) return rc;
    if ((rc = next_line(r, "the game line")) != CRADLE_OK) return rc;
    const char *game = value_of(r, "game");
    if (!game) return REFUSE(r, "line %u: expected \"game <name>\", got \"%s\"", r->in.line, r->text);
    size_t n = strlen(game);
    if (n < 1 || n > CRADLE_GAME_NAME_MAX)
        return REFUSE(r, "line %u: game name is %zu bytes, not 1..%u", r->in.line, n, CRADLE_GAME_NAME_MAX);
    memcpy(d->game, game, n + 1);
    if ((rc = next_line(r, "the hash line")) != CRADLE_OK) return rc;
    const char *hash = value_of(r, "hash");
    if (!hash) return REFUSE(r, "line %u: expected \"hash blake2b-128\", got \"%s\"", r->in.line, r->text);
    if (strcmp(hash, "blake2b-128") != 0)
        return REFUSE(r, "line %u: hash '%s' is not blake2b-128, the only hash of version 1", r->in.line, hash);
    return CRADLE_OK;
}

/* window, from, steps, bytes and windows, each against the others. */
static int read_shape(reader *r, cradle_golden_digest *d) {
    int rc = read_number(r, "window", 1, CRADLE_GOLDEN_DIGEST_WINDOW_MAX, &d->window);
    if (rc == CRADLE_OK) rc = read_number(r, "from", 0, UINT64_MAX, &d->from);
    if (rc == CRADLE_OK) rc = read_number(r, "steps", 0, UINT64_MAX - d->from, &d->steps);
    if (rc == CRADLE_OK) rc = read_number(r, "bytes", 0, UINT64_MAX, &d->bytes);
    if (rc != CRADLE_OK) return rc;
    if (d->steps < UINT64_MAX / CRADLE_GAME_OUTPUT_MAX && d->bytes > d->steps * CRADLE_GAME_OUTPUT_MAX)
        return REFUSE(r, "line %u: bytes %" PRIu64 " is more than %" PRIu64 " steps of at most %u bytes output",
                      r->in.line, d->bytes, d->steps, CRADLE_GAME_OUTPUT_MAX);
    uint64_t expected = d->steps / d->window + (d->steps % d->window != 0);
    if ((rc = read_number(r, "windows", 0, UINT64_MAX, &d->windows)) != CRADLE_OK) return rc;
    if (d->windows != expected)
        return REFUSE(r, "line %u: windows %" PRIu64 " is not ceil(steps %" PRIu64 " / window %" PRIu64 ") = %" PRIu64,
                      r->in.line, d->windows, d->steps, d->window, expected);
    return CRADLE_OK;
}

static int hex_digit(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Window line i: "<first step> <32 hex digits>". */
static int read_window(reader *r, const cradle_golden_digest *d, uint64_t i, size_t capacity) {
    int rc = next_line(r, "a window line");
    if (rc != CRADLE_OK) return rc;
    if (i >= capacity)
        return REFUSE(r, "line %u: window %" PRIu64 ": more windows than the %zu the caller has room for", r->in.line,
                      i, capacity);
    uint64_t first = d->from + i * d->window, step;
    char *space = strchr(r->text, ' ');
    if (!space) return REFUSE(r, "line %u: window %" PRIu64 ": expected \"<first step> <digest>\", got \"%s\"",
                              r->in.line, i, r->text);
    *space = '\0';
    if (!canonical_u64(r->text, 0, UINT64_MAX, &step) || step != first)
        return REFUSE(r, "line %u: window %" PRIu64 ": first step '%s' is not %" PRIu64 " (from + %" PRIu64
                      " x window)", r->in.line, i, r->text, first, i);
    const char *hex = space + 1;
    if (strlen(hex) != 2u * CRADLE_GOLDEN_DIGEST_BYTES)
        return REFUSE(r, "line %u: window %" PRIu64 ": digest '%s' is not %u lowercase hex digits", r->in.line, i, hex,
                      2u * CRADLE_GOLDEN_DIGEST_BYTES);
    for (unsigned b = 0; b < CRADLE_GOLDEN_DIGEST_BYTES; b++) {
        int hi = hex_digit(hex[2 * b]), lo = hex_digit(hex[2 * b + 1]);
        if (hi < 0 || lo < 0)
            return REFUSE(r, "line %u: window %" PRIu64 ": digest '%s' is not %u lowercase hex digits", r->in.line, i,
                          hex, 2u * CRADLE_GOLDEN_DIGEST_BYTES);
        d->digests[i][b] = (uint8_t)(hi << 4 | lo);
    }
    return CRADLE_OK;
}

int cradle_golden_digest_parse(cradle_golden_digest *d, const uint8_t *bytes, size_t size,
                               cradle_golden_digest_value *digests, size_t capacity, char *message,
                               size_t message_size) {
    if (message && message_size) message[0] = '\0';
    memset(d, 0, sizeof *d);
    d->digests = digests;
    reader r = {.in = {.bytes = bytes, .size = bytes ? size : 0}, .message = message, .message_size = message_size};
    int rc = read_identity(&r, d);
    if (rc == CRADLE_OK) rc = read_shape(&r, d);
    for (uint64_t i = 0; rc == CRADLE_OK && i < d->windows; i++) rc = read_window(&r, d, i, capacity);
    if (rc == CRADLE_OK && (rc = next_line(&r, "the \"end\" line")) == CRADLE_OK && strcmp(r.text, "end") != 0)
        rc = REFUSE(&r, "line %u: expected \"end\" after %" PRIu64 " window lines, got \"%s\"", r.in.line, d->windows,
                    r.text);
    if (rc == CRADLE_OK && r.in.at != r.in.size)
        rc = REFUSE(&r, "line %u: %zu bytes after the \"end\" line", r.in.line + 1, r.in.size - r.in.at);
    if (rc != CRADLE_OK) {
        memset(d, 0, sizeof *d);
        d->digests = digests;
    }
    return rc;
}

/* ---- writing ---------------------------------------------------------- */

/* Appends text to out at *at when it fits; counts it either way. */
static void put(char *out, size_t capacity, size_t *at, const char *text, size_t n) {
    if (*at <= capacity && n <= capacity - *at) memcpy(out + *at, text, n);
    *at += n;
}

size_t cradle_golden_digest_format(const cradle_golden_digest *d, char *out, size_t capacity) {
    assert(d && (out || capacity == 0));
    assert(d->window >= 1 && d->window <= CRADLE_GOLDEN_DIGEST_WINDOW_MAX);
    assert(d->steps <= UINT64_MAX - d->from);
    assert(d->windows == d->steps / d->window + (d->steps % d->window != 0));
    assert(d->game[0] && strlen(d->game) <= CRADLE_GAME_NAME_MAX);
    char line[512]; /* the header's eight lines at their longest */
    size_t at = 0;
    int n = snprintf(line, sizeof line,
                     "%sgame %s\nhash blake2b-128\nwindow %" PRIu64 "\nfrom %" PRIu64 "\nsteps %" PRIu64
                     "\nbytes %" PRIu64 "\nwindows %" PRIu64 "\n",
                     CRADLE_GOLDEN_DIGEST_MAGIC, d->game, d->window, d->from, d->steps, d->bytes, d->windows);
    assert(n > 0 && (size_t)n < sizeof line);
    put(out, capacity, &at, line, (size_t)n);
    for (uint64_t i = 0; i < d->windows; i++) {
        n = snprintf(line, sizeof line, "%" PRIu64 " ", d->from + i * d->window);
        for (unsigned b = 0; b < CRADLE_GOLDEN_DIGEST_BYTES; b++)
            n += snprintf(line + n, sizeof line - (size_t)n, "%02x", d->digests[i][b]);
        line[n++] = '\n';
        put(out, capacity, &at, line, (size_t)n);
    }
    put(out, capacity, &at, "end\n", 4);
    return at;
}

/* ---- computing ---------------------------------------------------------- */

void cradle_golden_digester_init(cradle_golden_digester *g, uint64_t window, uint64_t from) {
    assert(g && window >= 1 && window <= CRADLE_GOLDEN_DIGEST_WINDOW_MAX);
    memset(g, 0, sizeof *g);
    g->window = window;
    g->from = from;
}

bool cradle_golden_digester_add(cradle_golden_digester *g, uint64_t step, const void *output, size_t size,
                                cradle_golden_digest_value *digest) {
    assert(g && (output || size == 0) && digest);
    assert(step == g->from + g->steps && "steps in order, from the first");
    (void)step; /* read by the assert only */
    if (g->open_steps == 0) crypto_generichash_init(&g->hash, NULL, 0, CRADLE_GOLDEN_DIGEST_BYTES);
    if (size) crypto_generichash_update(&g->hash, output, size);
    g->steps++;
    g->bytes += size;
    if (++g->open_steps < g->window) return false;
    return cradle_golden_digester_finish(g, digest);
}

bool cradle_golden_digester_finish(cradle_golden_digester *g, cradle_golden_digest_value *digest) {
    assert(g && digest);
    if (g->open_steps == 0) return false;
    crypto_generichash_final(&g->hash, *digest, CRADLE_GOLDEN_DIGEST_BYTES);
    g->open_steps = 0;
    g->windows++;
    return true;
}
