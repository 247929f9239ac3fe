/*
 * cradle-viewers: many broadcast viewers in one process, to load an HTTP
 * cache (deploy/broadcast/edge.conf) in front of a broadcast
 * (shared/io/include/cradle/broadcast.h) and check everything it serves.
 *
 *   cradle-viewers --url URL --viewers N [--seconds S] [--poll-ms MS] [--json]
 *
 * Each viewer is a follower (shared/io/include/cradle/broadcast_follow.h),
 * the one a real viewer's mirror drives, keeping nothing but its place: it
 * fetches URL/sync every --poll-ms (the first at a random moment of the
 * first period, so the viewers do not all ask at once), then once URL/start,
 * then the newest keyframe the sync lists (decoded and checked), then every
 * fragment from the keyframe's on, in order, each checked against the one
 * before, following the sync until it says "ended" and the viewer holds the
 * last fragment, or --seconds pass. Without a keyframe listed a viewer
 * starts at fragment 0; a fragment in one of the sync's gaps makes it start
 * again at the first keyframe after the gap (a gap, counted). Data files are
 * not fetched.
 *
 * A document that fails its check is refused: counted, named on stderr (the
 * first few: "viewer 3: fragment 1: ..."), and fetched again after the
 * viewer's next sync. An HTTP failure (status, connection, timeout) is
 * counted the same way as an http error.
 *
 * One thread and libcurl's multi interface: at most --connections requests
 * are in flight (one easy handle each, reused; the multi handle keeps the
 * connections alive between requests, HTTP/1.1 keep-alive), a viewer has at
 * most one request in flight, and viewers wanting one wait in a FIFO;
 * viewers waiting for their next poll sit in a heap by time. Memory: a few
 * hundred bytes a viewer, one receive buffer a connection (grown to the
 * largest document it took), and one keyframe state buffer for the whole
 * process, sized by the largest keyframe header seen (at most 64 MiB):
 * keyframes are decoded one at a time, so the viewers share it.
 *
 * At the end it prints what happened (one JSON line with --json). Exit
 * status: 0 when no document was refused, every viewer that saw the end has
 * every fragment to the trailer, and some viewer took a sync document; 1
 * otherwise (or when it cannot run); 2 usage. SIGINT/SIGTERM end the run
 * early, with the report.
 */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

#include "cradle/broadcast.h"
#include "cradle/broadcast_follow.h"
#include "cradle/cursor.h"
#include "cradle/keys.h"
#include "cradle/parse.h"
#include "cradle/rng.h"
#include "cradle/systime.h"
#include "cradle/version.h"

#define PROGRAM "cradle-viewers"
#define VIEWERS_MAX 20000u
#define MESSAGES_SHOWN 10u       /* refusals, then http errors, named on stderr */
#define CONNECT_TIMEOUT_MS 2000L
#define REQUEST_TIMEOUT_MS 10000L
#define SPARE_FILES 64u          /* descriptors beyond the connections: stdio, curl's own */
#define KEYFRAME_STATE_SIZE_AT 48u /* the keyframe header's state size (u32 LE) */
#define WAKE_MS 100              /* the longest sleep: signals are noticed this fast */

/* ---- options ------------------------------------------------------------ */

enum { O_URL = 1, O_VIEWERS, O_SECONDS, O_POLL, O_CONNECTIONS, O_SEED, O_VERIFY_KEY, O_JSON, O_HELP, O_VERSION, O_COUNT };

/* The one table of options: getopt's, the ranges and --help come from it. */
static const struct option_row {
    const char *name, *value; /* value NULL: a flag */
    uint64_t min, max;        /* numbers: the range taken */
    const char *help;
} option_rows[O_COUNT] = {
    [O_URL] = {"url", "URL", 0, 0, "the broadcast's base URL (http:// or https://), e.g. an edge's"},
    [O_VIEWERS] = {"viewers", "N", 1, VIEWERS_MAX, "viewers to simulate, 1..20000"},
    [O_SECONDS] = {"seconds", "S", 1, 86400, "stop after S seconds, 1..86400 (default 60), sooner when every\n"
                                             "viewer has seen the end"},
    [O_POLL] = {"poll-ms", "MS", 100, 60000, "each viewer's sync period, 100..60000 (default 1000)"},
    [O_CONNECTIONS] = {"connections", "N", 1, 4096, "requests in flight and HTTP connections at most, 1..4096\n"
                                                    "(default 256; the open-file limit must allow them)"},
    [O_SEED] = {"seed", "N", 0, UINT64_MAX, "seed of the viewers' poll phases (default: from the clock)"},
    [O_VERIFY_KEY] = {"verify-key", "HEX", 0, 0, "the server's signing key (cradle-keys pub server.key --sign):\n"
                                                 "every fragment and keyframe must be signed by it"},
    [O_JSON] = {"json", NULL, 0, 0, "the report as one JSON line"},
    [O_HELP] = {"help", NULL, 0, 0, "show this help"},
    [O_VERSION] = {"version", NULL, 0, 0, "show the version"},
};

typedef struct settings {
    const char *url;
    uint64_t viewers, seconds, poll_ms, connections, seed;
    bool have_seed, json;
    bool verify;            /* --verify-key */
    uint8_t verify_key[32];
} settings;

static void usage(FILE *to) {
    fprintf(to, "usage: " PROGRAM " --url URL --viewers N [--seconds S] [--poll-ms MS] [--verify-key HEX] [--json]\n"
                "Simulates N broadcast viewers in one process: each polls URL/sync, fetches start,\n"
                "the newest keyframe and every fragment after it, and checks each document.\n\n");
    for (int i = 1; i < O_COUNT; i++) {
        const struct option_row *o = &option_rows[i];
        char left[40];
        snprintf(left, sizeof left, "--%s%s%s", o->name, o->value ? " " : "", o->value ? o->value : "");
        fprintf(to, "  %-20s ", left);
        for (const char *p = o->help; *p; p++) {
            fputc(*p, to);
            if (*p == '\n') fprintf(to, "  %-20s ", "");
        }
        fputc('\n', to);
    }
    fprintf(to, "\nPrints requests by kind, bytes, documents verified and refused, HTTP errors, gaps,\n"
                "the viewers that saw the end, request latency (p50/p99) and its own CPU time.\n"
                "Exit status: 0 nothing refused and every viewer that saw the end has every\n"
                "fragment, 1 otherwise (or no sync document at all), 2 usage.\n");
}

/* One option into st. Returns -1 to go on, or the exit status. */
static int take_option(settings *st, int id, const char *value) {
    const struct option_row *o = &option_rows[id];
    uint64_t *number = id == O_VIEWERS       ? &st->viewers
                       : id == O_SECONDS     ? &st->seconds
                       : id == O_POLL        ? &st->poll_ms
                       : id == O_CONNECTIONS ? &st->connections
                       : id == O_SEED        ? &st->seed
                                             : NULL;
    switch (id) {
    case O_URL:
        if (strncmp(value, "http://", 7) != 0 && strncmp(value, "https://", 8) != 0) {
            fprintf(stderr, PROGRAM ": --url must start with http:// or https://, got '%s'\n", value);
            return 2;
        }
        if (strlen(value) + 2u > CRADLE_BROADCAST_URL_MAX - 32u) {
            fprintf(stderr, PROGRAM ": --url is longer than %u bytes\n", CRADLE_BROADCAST_URL_MAX - 34u);
            return 2;
        }
        st->url = value;
        return -1;
    case O_VERIFY_KEY:
        if (cradle_keys_from_hex(st->verify_key, value) != 0) {
            fprintf(stderr, PROGRAM ": --verify-key must be 64 hex digits (cradle-keys pub server.key --sign), got '%s'\n",
                    value);
            return 2;
        }
        st->verify = true;
        return -1;
    case O_JSON: st->json = true; return -1;
    case O_HELP: usage(stdout); return 0;
    case O_VERSION: {
        char version[CRADLE_VERSION_TEXT_MAX];
        cradle_version_text(version, sizeof version, PROGRAM, ", broadcast format 1");
        printf("%s\n", version);
        return 0;
    }
    default:
        if (!number || !cradle_parse_u64(value, o->min, o->max, number)) {
            fprintf(stderr, PROGRAM ": --%s must be an integer from %" PRIu64 " to %" PRIu64 ", got '%s'\n", o->name,
                    o->min, o->max, value);
            return 2;
        }
        if (id == O_SEED) st->have_seed = true;
        return -1;
    }
}

/* The command line into st. Returns -1 to run, or the exit status. */
static int parse_args(int argc, char **argv, settings *st) {
    *st = (settings){.seconds = 60, .poll_ms = 1000, .connections = 256};
    struct option long_options[O_COUNT];
    for (int i = 1; i < O_COUNT; i++)
        long_options[i - 1] = (struct option){option_rows[i].name,
                                              option_rows[i].value ? required_argument : no_argument, NULL, i};
    long_options[O_COUNT - 1] = (struct option){NULL, 0, NULL, 0};
    bool have_viewers = false;
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
        if (opt == '?' || opt == ':') {
            fprintf(stderr, PROGRAM ": unknown option or missing value in '%s'\n", argv[optind - 1]);
            usage(stderr);
            return 2;
        }
        if (opt == O_VIEWERS) have_viewers = true;
        int rc = take_option(st, opt, optarg);
        if (rc >= 0) return rc;
    }
    if (optind != argc) {
        fprintf(stderr, PROGRAM ": unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (!st->url || !have_viewers) {
        fprintf(stderr, PROGRAM ": --url and --viewers are required\n");
        usage(stderr);
        return 2;
    }
    return -1;
}

/* ---- latency ------------------------------------------------------------ */

/* Log-linear buckets of microseconds: exact below 64 us, then 64 buckets
 * per power of two (within 1.6 %), up to 2^36 us (19 hours). */
#define HIST_SUB_BITS 6u
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_TOP_BIT 36u
#define HIST_BUCKETS ((HIST_TOP_BIT - HIST_SUB_BITS + 1u) * HIST_SUB + HIST_SUB)

typedef struct histogram {
    uint64_t count;
    uint32_t bucket[HIST_BUCKETS];
} histogram;

static uint32_t hist_index(uint64_t us) {
    if (us >= (1ull << HIST_TOP_BIT)) us = (1ull << HIST_TOP_BIT) - 1u;
    if (us < HIST_SUB) return (uint32_t)us;
    unsigned bit = 63u - (unsigned)__builtin_clzll(us);
    uint32_t sub = (uint32_t)(us >> (bit - HIST_SUB_BITS)) & (HIST_SUB - 1u);
    return (bit - HIST_SUB_BITS + 1u) * HIST_SUB + sub;
}

/* The middle of bucket i, in microseconds. */
static double hist_value(uint32_t i) {
    if (i < HIST_SUB) return i;
    unsigned bit = i / HIST_SUB + HIST_SUB_BITS - 1u;
    uint64_t low = (uint64_t)(HIST_SUB + i % HIST_SUB) << (bit - HIST_SUB_BITS);
    uint64_t width = 1ull << (bit - HIST_SUB_BITS);
    return (double)low + (double)width / 2.0;
}

static void hist_add(histogram *h, uint64_t us) {
    h->bucket[hist_index(us)]++;
    h->count++;
}

/* The q-quantile (0..1) in milliseconds; 0 without samples. */
static double hist_ms(const histogram *h, double q) {
    if (h->count == 0) return 0.0;
    uint64_t rank = (uint64_t)(q * (double)h->count + 0.999999);
    if (rank == 0) rank = 1;
    uint64_t seen = 0;
    for (uint32_t i = 0; i < HIST_BUCKETS; i++) {
        seen += h->bucket[i];
        if (seen >= rank) return hist_value(i) / 1000.0;
    }
    return hist_value(HIST_BUCKETS - 1u) / 1000.0;
}

/* ---- viewers and requests ----------------------------------------------- */

enum { K_SYNC, K_START, K_KEY, K_FRAG, KINDS };
static const char *const kind_names[KINDS] = {"sync", "start", "key", "frag"};

/* The request kind (its counters) of a document a follower asks for. */
static int kind_of(cradle_broadcast_follow_want want) {
    switch (want) {
    case CRADLE_BROADCAST_FOLLOW_SYNC: return K_SYNC;
    case CRADLE_BROADCAST_FOLLOW_START: return K_START;
    case CRADLE_BROADCAST_FOLLOW_KEYFRAME: return K_KEY;
    default: return K_FRAG;
    }
}

/* Bytes a document of each kind may have; one more is refused unread. */
static size_t kind_limit(int kind) {
    switch (kind) {
    case K_SYNC: return CRADLE_BROADCAST_SYNC_MAX;
    case K_START: return CRADLE_LOG_HEADER_BYTES;
    case K_KEY: return cradle_broadcast_keyframe_bound(CRADLE_BROADCAST_STATE_MAX);
    default: return CRADLE_BROADCAST_FRAGMENT_MAX;
    }
}

typedef struct viewer {
    cradle_broadcast_follow f;     /* its place; f.next_poll orders the heap */
    uint32_t index;
    bool finished;                 /* f is done, counted in tool.finished */
} viewer;

typedef struct slot {
    CURL *easy;
    viewer *v;                     /* NULL: free */
    int kind;
    uint64_t number;               /* of the fragment or keyframe */
    uint8_t *buffer;               /* K_FRAG: the viewer's start, then the body */
    size_t capacity, length, prefix, limit;
    bool overflow, no_memory;
    char url[CRADLE_BROADCAST_URL_MAX];
} slot;

typedef struct stats {
    uint64_t requests[KINDS], bytes, fragments_verified, keyframes_verified, refused, http_errors, gaps;
    uint64_t broadcast_fragments;  /* the most fragments a sync document listed */
    uint32_t shown_refusals, shown_errors;
    histogram latency[KINDS], all;
} stats;

typedef struct tool {
    settings st;
    char base[CRADLE_BROADCAST_URL_MAX];
    cradle_broadcast_follow_config follow; /* every viewer's */
    viewer *viewers;
    uint32_t count;
    uint32_t *fifo;                /* viewers wanting a request now, a ring */
    uint32_t fifo_head, fifo_length;
    uint32_t *heap;                /* viewers waiting for next_poll_ns, a min-heap */
    uint32_t heap_length;
    slot *slots;
    uint32_t slot_count, *free_slots, free_count;
    CURLM *multi;
    cradle_state_pack codec;
    uint8_t *state;                /* the one keyframe state buffer */
    size_t state_capacity;
    uint32_t finished;
    stats s;
} tool;

static volatile sig_atomic_t stop_signal;
static void on_stop(int signo) { stop_signal = signo; }

static void fifo_push(tool *t, viewer *v) {
    t->fifo[(t->fifo_head + t->fifo_length++) % t->count] = v->index;
}

static viewer *fifo_pop(tool *t) {
    viewer *v = &t->viewers[t->fifo[t->fifo_head]];
    t->fifo_head = (t->fifo_head + 1u) % t->count;
    t->fifo_length--;
    return v;
}

static bool heap_before(const tool *t, uint32_t a, uint32_t b) {
    return t->viewers[t->heap[a]].f.next_poll < t->viewers[t->heap[b]].f.next_poll;
}

static void heap_swap(tool *t, uint32_t a, uint32_t b) {
    uint32_t x = t->heap[a];
    t->heap[a] = t->heap[b];
    t->heap[b] = x;
}

static void heap_push(tool *t, viewer *v) {
    uint32_t i = t->heap_length++;
    t->heap[i] = v->index;
    while (i > 0 && heap_before(t, i, (i - 1u) / 2u)) {
        heap_swap(t, i, (i - 1u) / 2u);
        i = (i - 1u) / 2u;
    }
}

static viewer *heap_pop(tool *t) {
    viewer *v = &t->viewers[t->heap[0]];
    t->heap[0] = t->heap[--t->heap_length];
    uint32_t i = 0;
    for (;;) {
        uint32_t l = 2u * i + 1u, r = l + 1u, m = i;
        if (l < t->heap_length && heap_before(t, l, m)) m = l;
        if (r < t->heap_length && heap_before(t, r, m)) m = r;
        if (m == i) break;
        heap_swap(t, i, m);
        i = m;
    }
    return v;
}

/* ---- what a viewer notes ------------------------------------------------ */

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void refuse(tool *t, const viewer *v, const char *format, ...) {
    t->s.refused++;
    if (t->s.shown_refusals++ >= MESSAGES_SHOWN) return;
    char text[CRADLE_BROADCAST_MESSAGE_MAX + 64];
    va_list args;
    va_start(args, format);
    (void)vsnprintf(text, sizeof text, format, args);
    va_end(args);
    fprintf(stderr, PROGRAM ": viewer %" PRIu32 ": %s%s\n", v->index, text,
            t->s.shown_refusals == MESSAGES_SHOWN ? " (further refusals are only counted)" : "");
}

static void http_error(tool *t, viewer *v, const char *url, const char *what) {
    t->s.http_errors++;
    cradle_broadcast_follow_failed(&v->f);
    if (t->s.shown_errors++ >= MESSAGES_SHOWN) return;
    fprintf(stderr, PROGRAM ": viewer %" PRIu32 ": GET %s: %s%s\n", v->index, url, what,
            t->s.shown_errors == MESSAGES_SHOWN ? " (further HTTP errors are only counted)" : "");
}

/* What v asks for now (its follower's next), with what the asking found
 * counted: a gap skipped, a refusal, the end. */
static void ask(tool *t, viewer *v, uint64_t now, cradle_broadcast_follow_ask *a) {
    cradle_broadcast_follow_next(&v->f, now, a);
    if (a->note == CRADLE_BROADCAST_FOLLOW_GAP) t->s.gaps++;
    else if (a->note == CRADLE_BROADCAST_FOLLOW_REFUSED) refuse(t, v, "%s", a->message);
    if (a->want == CRADLE_BROADCAST_FOLLOW_DONE && !v->finished) {
        v->finished = true;
        t->finished++;
    }
}

static bool asks_nothing(const cradle_broadcast_follow_ask *a) {
    return a->want == CRADLE_BROADCAST_FOLLOW_WAIT || a->want == CRADLE_BROADCAST_FOLLOW_DONE;
}

/* Puts v where it belongs after something changed: in the FIFO, the heap,
 * or nowhere (finished). */
static void route(tool *t, viewer *v, uint64_t now) {
    cradle_broadcast_follow_ask a;
    ask(t, v, now, &a);
    if (!asks_nothing(&a)) fifo_push(t, v);
    else if (!v->finished) heap_push(t, v);
}

/* ---- documents ---------------------------------------------------------- */

/* Grows the shared state buffer to the state size a keyframe's header
 * names (capped: the decoder refuses larger states). False: out of memory. */
static bool state_room(tool *t, const slot *q) {
    if (q->length < KEYFRAME_STATE_SIZE_AT + 4u) return true; /* the decoder refuses it */
    size_t want = cradle_cursor_load_u32(q->buffer + KEYFRAME_STATE_SIZE_AT);
    if (want > CRADLE_BROADCAST_STATE_MAX) want = CRADLE_BROADCAST_STATE_MAX;
    if (want <= t->state_capacity) return true;
    uint8_t *bigger = realloc(t->state, want);
    if (!bigger) return false;
    t->state = bigger;
    t->state_capacity = want;
    return true;
}

/* The document q fetched, to v's follower, counted. */
static void take(tool *t, viewer *v, const slot *q) {
    cradle_broadcast_follow *f = &v->f;
    char why[CRADLE_BROADCAST_MESSAGE_MAX];
    int rc = 0;
    switch (q->kind) {
    case K_SYNC:
        rc = cradle_broadcast_follow_take_sync(f, q->buffer, q->length, why, sizeof why);
        if (rc == 0 && f->sync.fragments > t->s.broadcast_fragments) t->s.broadcast_fragments = f->sync.fragments;
        break;
    case K_START: rc = cradle_broadcast_follow_take_start(f, q->buffer, q->length, why, sizeof why); break;
    case K_KEY: {
        if (!state_room(t, q)) {
            http_error(t, v, q->url, "out of memory for the keyframe's state");
            return;
        }
        cradle_broadcast_keyframe k;
        rc = cradle_broadcast_follow_take_keyframe(f, &t->codec, q->buffer, q->length, t->state, t->state_capacity, &k,
                                                   why, sizeof why);
        if (rc == 0) t->s.keyframes_verified++;
        break;
    }
    default: {
        cradle_broadcast_fragment_info info;
        rc = cradle_broadcast_follow_take_fragment(f, q->buffer, q->length, &info, why, sizeof why);
        if (rc == 0) t->s.fragments_verified++;
        break;
    }
    }
    if (rc != 0) refuse(t, v, "%s", why);
}

/* ---- HTTP --------------------------------------------------------------- */

static size_t on_body(char *data, size_t size, size_t count, void *user) {
    slot *q = user;
    size_t n = size * count;
    if (n > q->limit - (q->length - q->prefix)) {
        q->overflow = true;
        return 0; /* libcurl stops the transfer */
    }
    if (q->length + n > q->capacity) {
        size_t want = q->capacity ? q->capacity : 8192u;
        while (want < q->length + n) want *= 2u;
        if (want > q->prefix + q->limit) want = q->prefix + q->limit;
        uint8_t *bigger = realloc(q->buffer, want);
        if (!bigger) {
            q->no_memory = true;
            return 0;
        }
        q->buffer = bigger;
        q->capacity = want;
    }
    memcpy(q->buffer + q->length, data, n);
    q->length += n;
    return n;
}

/* Starts v's request of kind in a free slot. False: it could not (the
 * viewer is counted an HTTP error and waits for its next poll). */
static bool start_request(tool *t, viewer *v, const cradle_broadcast_follow_ask *a, uint64_t now) {
    slot *q = &t->slots[t->free_slots[--t->free_count]];
    int kind = kind_of(a->want);
    q->v = v;
    q->kind = kind;
    q->number = a->number;
    q->overflow = q->no_memory = false;
    q->prefix = kind == K_FRAG ? CRADLE_LOG_HEADER_BYTES : 0;
    q->limit = kind_limit(kind);
    q->length = 0;
    int rc = cradle_broadcast_follow_url(q->url, sizeof q->url, t->base, a);
    if (rc == 0 && q->prefix) {
        if (q->capacity < q->prefix + 8192u) {
            uint8_t *bigger = realloc(q->buffer, q->prefix + 8192u);
            if (bigger) {
                q->buffer = bigger;
                q->capacity = q->prefix + 8192u;
            }
        }
        if (q->capacity >= q->prefix) {
            memcpy(q->buffer, v->f.start, q->prefix);
            q->length = q->prefix;
        } else {
            rc = -1;
        }
    }
    if (kind == K_SYNC) cradle_broadcast_follow_polled(&v->f, now);
    if (rc == 0) {
        curl_easy_setopt(q->easy, CURLOPT_URL, q->url);
        curl_easy_setopt(q->easy, CURLOPT_WRITEDATA, q);
        curl_easy_setopt(q->easy, CURLOPT_PRIVATE, q);
        if (curl_multi_add_handle(t->multi, q->easy) == CURLM_OK) return true;
    }
    http_error(t, v, q->url, "could not start the request");
    q->v = NULL;
    t->free_slots[t->free_count++] = (uint32_t)(q - t->slots);
    return false;
}

/* A transfer ended: counts it, checks the document, routes the viewer. */
static void end_request(tool *t, slot *q, CURLcode result, uint64_t now) {
    viewer *v = q->v;
    long status = 0;
    curl_off_t us = 0;
    curl_easy_getinfo(q->easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(q->easy, CURLINFO_TOTAL_TIME_T, &us);
    curl_multi_remove_handle(t->multi, q->easy);
    t->s.requests[q->kind]++;
    t->s.bytes += q->length - q->prefix;
    hist_add(&t->s.latency[q->kind], us > 0 ? (uint64_t)us : 0);
    hist_add(&t->s.all, us > 0 ? (uint64_t)us : 0);
    const char *what = q->kind == K_SYNC ? "sync" : q->kind == K_START ? "start" : q->kind == K_KEY ? "keyframe" : "fragment";
    if (q->overflow) {
        if (q->kind == K_KEY || q->kind == K_FRAG)
            refuse(t, v, "%s %" PRIu64 ": more than %zu bytes", what, q->number, q->limit);
        else
            refuse(t, v, "%s: more than %zu bytes", what, q->limit);
    } else if (q->no_memory) {
        http_error(t, v, q->url, "out of memory for the body");
    } else if (result != CURLE_OK) {
        http_error(t, v, q->url, curl_easy_strerror(result));
    } else if (status != 200) {
        char text[32];
        snprintf(text, sizeof text, "HTTP %ld", status);
        http_error(t, v, q->url, text);
    } else {
        take(t, v, q);
    }
    q->v = NULL;
    t->free_slots[t->free_count++] = (uint32_t)(q - t->slots);
    route(t, v, now);
}

/* ---- set-up and the run ------------------------------------------------- */

/* The open-file limit must hold every connection: raised to what they need
 * when the hard limit allows. False, said on stderr, when it cannot. */
static bool enough_files(uint64_t connections) {
    struct rlimit lim;
    rlim_t need = (rlim_t)(connections + SPARE_FILES);
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur >= need) return true;
    if (lim.rlim_max == RLIM_INFINITY || lim.rlim_max >= need) {
        lim.rlim_cur = need;
        if (setrlimit(RLIMIT_NOFILE, &lim) == 0) return true;
    }
    fprintf(stderr, PROGRAM ": --connections %" PRIu64 " needs about %" PRIu64 " open files; ulimit -n is %" PRIu64
            " (hard limit %" PRIu64 "): lower --connections or raise the limit\n", connections, (uint64_t)need,
            (uint64_t)lim.rlim_cur, (uint64_t)lim.rlim_max);
    return false;
}

/* Everything allocated once, before the run. False, said on stderr, on failure. */
static bool setup(tool *t) {
    size_t n = strlen(t->st.url);
    snprintf(t->base, sizeof t->base, "%s%s", t->st.url, n && t->st.url[n - 1] == '/' ? "" : "/");
    t->count = (uint32_t)t->st.viewers;
    t->slot_count = (uint32_t)t->st.connections;
    t->follow = (cradle_broadcast_follow_config){.from = CRADLE_BROADCAST_FOLLOW_NEWEST,
                                                 .poll_ms = (uint32_t)t->st.poll_ms,
                                                 .verify_key = t->st.verify ? t->st.verify_key : NULL};
    t->viewers = calloc(t->count, sizeof *t->viewers);
    t->fifo = calloc(t->count, sizeof *t->fifo);
    t->heap = calloc(t->count, sizeof *t->heap);
    t->slots = calloc(t->slot_count, sizeof *t->slots);
    t->free_slots = calloc(t->slot_count, sizeof *t->free_slots);
    t->state_capacity = 4096u;
    t->state = malloc(t->state_capacity);
    t->multi = curl_multi_init();
    if (!t->viewers || !t->fifo || !t->heap || !t->slots || !t->free_slots || !t->state || !t->multi ||
        cradle_state_pack_init(&t->codec, 0, CRADLE_STATE_PACK_BOTH) != 0) {
        fprintf(stderr, PROGRAM ": out of memory for %" PRIu32 " viewers\n", t->count);
        return false;
    }
    curl_multi_setopt(t->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)t->slot_count);
    curl_multi_setopt(t->multi, CURLMOPT_MAXCONNECTS, (long)t->slot_count); /* idle ones are kept, not closed */
    for (uint32_t i = 0; i < t->slot_count; i++) {
        CURL *e = curl_easy_init();
        if (!e) {
            fprintf(stderr, PROGRAM ": cannot make libcurl handles\n");
            return false;
        }
        curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, REQUEST_TIMEOUT_MS);
        curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
        t->slots[i].easy = e;
        t->free_slots[t->free_count++] = i;
    }
    cradle_rng rng;
    cradle_rng_seed(&rng, t->st.seed, 0x76696577u);
    uint64_t now = cradle_mono_ns();
    uint32_t phase_bound = t->st.poll_ms * 1000u > UINT32_MAX ? UINT32_MAX : (uint32_t)(t->st.poll_ms * 1000u);
    for (uint32_t i = 0; i < t->count; i++) {
        viewer *v = &t->viewers[i];
        v->index = i;
        /* microseconds of phase */
        cradle_broadcast_follow_init(&v->f, &t->follow, now + (uint64_t)cradle_rng_below(&rng, phase_bound) * 1000u);
        heap_push(t, v);
    }
    return true;
}

/* Runs the viewers until --seconds pass, all have finished, or a signal.
 * Returns the seconds it ran. */
static double run(tool *t) {
    uint64_t begin = cradle_mono_ns(), deadline = begin + t->st.seconds * 1000000000u;
    for (;;) {
        uint64_t now = cradle_mono_ns();
        if (stop_signal || now >= deadline || t->finished == t->count) break;
        while (t->heap_length && t->viewers[t->heap[0]].f.next_poll <= now) route(t, heap_pop(t), now);
        while (t->free_count && t->fifo_length) {
            viewer *v = fifo_pop(t);
            cradle_broadcast_follow_ask a;
            ask(t, v, now, &a);
            if (asks_nothing(&a)) {
                if (!v->finished) heap_push(t, v);
            } else if (!start_request(t, v, &a, now)) {
                heap_push(t, v);
            }
        }
        int running = 0;
        curl_multi_perform(t->multi, &running);
        CURLMsg *msg;
        int left = 0;
        now = cradle_mono_ns();
        while ((msg = curl_multi_info_read(t->multi, &left)) != NULL) {
            if (msg->msg != CURLMSG_DONE) continue;
            char *private = NULL;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &private);
            CURLcode result = msg->data.result;
            end_request(t, (slot *)(void *)private, result, now);
        }
        if (t->free_count && t->fifo_length) continue;
        uint64_t wake = deadline;
        if (t->heap_length && t->viewers[t->heap[0]].f.next_poll < wake) wake = t->viewers[t->heap[0]].f.next_poll;
        uint64_t wait_ms = wake > now ? (wake - now + 999999u) / 1000000u : 0;
        if (wait_ms > WAKE_MS) wait_ms = WAKE_MS;
        curl_multi_poll(t->multi, NULL, 0, (int)wait_ms, NULL);
    }
    return (double)(cradle_mono_ns() - begin) / 1e9;
}

static void teardown(tool *t) {
    for (uint32_t i = 0; t->slots && i < t->slot_count; i++) {
        if (!t->slots[i].easy) continue;
        if (t->slots[i].v) curl_multi_remove_handle(t->multi, t->slots[i].easy);
        curl_easy_cleanup(t->slots[i].easy);
        free(t->slots[i].buffer);
    }
    if (t->multi) curl_multi_cleanup(t->multi);
    cradle_state_pack_free(&t->codec);
    free(t->viewers);
    free(t->fifo);
    free(t->heap);
    free(t->slots);
    free(t->free_slots);
    free(t->state);
}

/* ---- the report --------------------------------------------------------- */

typedef struct outcome {
    double seconds, cpu_user, cpu_system;
    uint32_t ended, complete, synced;
    bool ok;
} outcome;

static double seconds_of(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }

static outcome outcome_of(const tool *t, double seconds) {
    outcome o = {.seconds = seconds};
    for (uint32_t i = 0; i < t->count; i++) {
        const viewer *v = &t->viewers[i];
        bool saw_ended = v->f.have_sync && v->f.sync.ended;
        if (saw_ended) o.ended++;
        if (saw_ended && v->f.done && v->f.complete) o.complete++;
        if (v->f.have_sync) o.synced++;
    }
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        o.cpu_user = seconds_of(ru.ru_utime);
        o.cpu_system = seconds_of(ru.ru_stime);
    }
    o.ok = t->s.refused == 0 && o.complete == o.ended && o.synced > 0;
    return o;
}

static void report(const tool *t, const outcome *o) {
    const stats *s = &t->s;
    uint64_t requests = 0;
    for (int k = 0; k < KINDS; k++) requests += s->requests[k];
    double per_viewer_s = o->seconds > 0 ? (double)s->bytes / (double)t->count / o->seconds : 0.0;
    if (t->st.json) {
        printf("{\"viewers\":%" PRIu32 ",\"seconds\":%.3f,\"poll_ms\":%" PRIu64 ",\"connections\":%" PRIu32
               ",\"seed\":%" PRIu64 ",\"requests\":%" PRIu64,
               t->count, o->seconds, t->st.poll_ms, t->slot_count, t->st.seed, requests);
        for (int k = 0; k < KINDS; k++) printf(",\"requests_%s\":%" PRIu64, kind_names[k], s->requests[k]);
        printf(",\"bytes\":%" PRIu64 ",\"bytes_per_viewer_per_s\":%.1f,\"fragments_verified\":%" PRIu64
               ",\"keyframes_verified\":%" PRIu64 ",\"refused\":%" PRIu64 ",\"http_errors\":%" PRIu64
               ",\"gaps\":%" PRIu64 ",\"broadcast_fragments\":%" PRIu64 ",\"viewers_synced\":%" PRIu32
               ",\"viewers_ended\":%" PRIu32 ",\"viewers_complete\":%" PRIu32 ",\"p50_ms\":%.3f,\"p99_ms\":%.3f",
               s->bytes, per_viewer_s, s->fragments_verified, s->keyframes_verified, s->refused, s->http_errors,
               s->gaps, s->broadcast_fragments, o->synced, o->ended, o->complete, hist_ms(&s->all, 0.5),
               hist_ms(&s->all, 0.99));
        for (int k = 0; k < KINDS; k++)
            printf(",\"%s_p50_ms\":%.3f,\"%s_p99_ms\":%.3f", kind_names[k], hist_ms(&s->latency[k], 0.5), kind_names[k],
                   hist_ms(&s->latency[k], 0.99));
        printf(",\"cpu_s\":%.3f,\"cpu_user_s\":%.3f,\"cpu_system_s\":%.3f,\"ok\":%s}\n", o->cpu_user + o->cpu_system,
               o->cpu_user, o->cpu_system, o->ok ? "true" : "false");
        return;
    }
    printf(PROGRAM ": %" PRIu32 " viewers for %.1f s of %s (poll %" PRIu64 " ms, %" PRIu32 " connections, seed %"
           PRIu64 ")\n", t->count, o->seconds, t->base, t->st.poll_ms, t->slot_count, t->st.seed);
    printf("requests   %" PRIu64 " (sync %" PRIu64 ", start %" PRIu64 ", key %" PRIu64 ", frag %" PRIu64 ")\n",
           requests, s->requests[K_SYNC], s->requests[K_START], s->requests[K_KEY], s->requests[K_FRAG]);
    printf("bytes      %" PRIu64 " (%.1f per viewer per second)\n", s->bytes, per_viewer_s);
    printf("verified   %" PRIu64 " fragments, %" PRIu64 " keyframes (the broadcast listed %" PRIu64 " fragments)\n",
           s->fragments_verified, s->keyframes_verified, s->broadcast_fragments);
    printf("problems   %" PRIu64 " refused, %" PRIu64 " http errors, %" PRIu64 " gaps skipped\n", s->refused,
           s->http_errors, s->gaps);
    printf("viewers    %" PRIu32 " took a sync, %" PRIu32 " saw the end, %" PRIu32 " of those have every fragment\n",
           o->synced, o->ended, o->complete);
    printf("latency    p50/p99 ms: all %.2f/%.2f", hist_ms(&s->all, 0.5), hist_ms(&s->all, 0.99));
    for (int k = 0; k < KINDS; k++)
        printf(", %s %.2f/%.2f", kind_names[k], hist_ms(&s->latency[k], 0.5), hist_ms(&s->latency[k], 0.99));
    printf("\ncpu        %.2f s (user %.2f, system %.2f)\n", o->cpu_user + o->cpu_system, o->cpu_user, o->cpu_system);
    printf("%s\n", o->ok ? "ok" : "FAILED");
}

int main(int argc, char **argv) {
    static tool t; /* big (the histograms): not on the stack */
    int rc = parse_args(argc, argv, &t.st);
    if (rc >= 0) return rc;
    if (!t.st.have_seed) t.st.seed = cradle_wall_ns() ^ ((uint64_t)getpid() << 32);
    if (!enough_files(t.st.connections)) return 1;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, PROGRAM ": libcurl did not initialise\n");
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    rc = 1;
    if (setup(&t)) {
        double seconds = run(&t);
        outcome o = outcome_of(&t, seconds);
        report(&t, &o);
        if (o.synced == 0) fprintf(stderr, PROGRAM ": no viewer took a sync document from %ssync\n", t.base);
        rc = o.ok ? 0 : 1;
    }
    teardown(&t);
    curl_global_cleanup();
    return rc;
}
