/*
 * broadcast: the uploader thread of --broadcast (see broadcast.h).
 */
#include "broadcast.h"

#include <assert.h>
#include <curl/curl.h>
#include <sodium.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cradle/cursor.h"
#include "cradle/os.h"
#include "cradle/ring.h"
#include "cradle/systime.h"
#include "cradle/wasm_module.h"
#include "cradle/writer.h"

enum {
    CHUNK = 4096,                  /* one ring element */
    CHUNK_DATA = CHUNK - 8,
    RING_CHUNKS = 512,             /* 2 MiB: well over the blocks of one PUT's timeout */
    POLL_MS = 50,
    BACKOFF_FIRST_MS = 250,
    BACKOFF_MAX_MS = 8000,
    CONNECT_TIMEOUT_MS = 2000,
    REQUEST_TIMEOUT_MS = 5000,
    PIECE_FIRST = 1,               /* a chunk that starts a piece: size is the piece's */
    PIECE_MORE = 2,                /* the rest of it */
    PIECE_AFTER_LOSS = 0x100,      /* pieces were dropped before this one */
    WEB_RECHECK_MS = 2000,         /* a missing or refused twin: look again */
    WEB_RETRY_MS = 60000,          /* the origin refused a web file, or failed too often */
    WEB_FAILURES_MAX = 3,          /* web PUTs failing in a row before that pause */
    WEB_MIN_BYTES_PER_MS = 256,    /* a web PUT's timeout grows with its size: 256 KB/s at least */
};

typedef struct chunk {
    uint32_t kind;
    uint32_t size; /* PIECE_FIRST: the piece's bytes; PIECE_MORE: this chunk's */
    uint8_t bytes[CHUNK_DATA];
} chunk;

/* A fragment cut from the blocks, waiting for its upload. */
typedef struct fragment {
    uint64_t number;
    uint8_t *bytes;                /* the blocks */
    size_t size;
    uint32_t first_sequence, end_sequence;
    uint64_t cut_ns;
    uint32_t data_count, data_done;
    uint8_t data_hash[CRADLE_BROADCAST_FRAGMENT_DATA_MAX][CRADLE_LOG_FILE_HASH_BYTES];
    uint32_t data_size[CRADLE_BROADCAST_FRAGMENT_DATA_MAX];
    bool trailer;
    bool uploaded;                 /* the fragment itself; a keyframe may still follow */
} fragment;

/* What a file was when it was last looked at: a refused twin is read again
 * only once it changed. */
typedef struct file_identity {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
} file_identity;

typedef enum web_state {
    WEB_OFF,        /* no library path: nothing to publish */
    WEB_PREPARE,    /* read, check and hash the files, write the manifest */
    WEB_UPLOADING,  /* PUT them, one per call */
    WEB_WAITING,    /* missing, refused or failing: look again at recheck_ns */
    WEB_DONE,       /* listed in the sync document */
} web_state;

/* The thread's work on the build in charge's web files (server/src/broadcast.h). */
typedef struct web_job {
    web_state state;
    uint64_t serial;               /* of the build() it is for */
    char build[CRADLE_GAME_BUILD_ID_MAX + 1];
    char library[CRADLE_SERVER_BROADCAST_PATH_MAX];
    uint32_t sound_count;
    char sounds[CRADLE_GAME_MAX_SOUNDS][CRADLE_GAME_SOUND_NAME_MAX + 1];
    cradle_broadcast_web_file wasm;
    cradle_broadcast_web_file sound[CRADLE_GAME_MAX_SOUNDS];
    uint32_t sounds_missing;
    char *manifest;                /* CRADLE_BROADCAST_WEB_MANIFEST_MAX bytes, from start */
    size_t manifest_size;
    uint8_t manifest_hash[CRADLE_BROADCAST_WEB_HASH_BYTES];
    uint32_t next;                 /* UPLOADING: 0 the twin, 1..sound_count a sound, then the manifest */
    uint32_t failures;             /* its PUTs that failed in a row */
    uint64_t recheck_ns;           /* WAITING: when to look again */
    bool when_changed;             /* WAITING: and only if the twin's file changed */
    file_identity identity;        /* the twin's, when it was read */
} web_job;

struct cradle_server_broadcast {
    cradle_server_broadcast_config config;
    char base[CRADLE_BROADCAST_URL_MAX];
    char auth_header[CRADLE_SERVER_BROADCAST_AUTH_MAX + 32];
    bool signing;
    uint8_t sign_secret[CRADLE_LOG_SIGNATURE_MAX];

    /* ---- the game thread's side ---- */
    _Alignas(CRADLE_RING_CACHE_LINE) cradle_ring ring;
    void *ring_storage;
    bool piece_lost;               /* a piece was dropped: the next one says so */
    atomic_uint_fast64_t lost_pieces;
    uint64_t next_keyframe_step;   /* game thread only */
    atomic_uint_fast64_t live_step;
    atomic_uint keyframe_full;     /* 1: the mailbox holds a state for the thread */
    cradle_broadcast_keyframe mailbox;
    uint8_t *mailbox_state;
    atomic_uint_fast64_t keyframes_skipped;

    /* ---- shared, under mutex ---- */
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    bool stop, finishing, done;
    atomic_bool abort_transfers;   /* stop(): a PUT in progress gives up now */
    char build[CRADLE_GAME_BUILD_ID_MAX + 1];
    uint64_t build_serial;         /* bumped by each build(): the thread's web job follows it */
    char library[CRADLE_SERVER_BROADCAST_PATH_MAX];
    uint32_t sound_count;
    char sounds[CRADLE_GAME_MAX_SOUNDS][CRADLE_GAME_SOUND_NAME_MAX + 1];
    cradle_server_broadcast_stats stats;
    pthread_t thread;
    bool thread_started;

    /* ---- the thread's own ---- */
    CURL *curl;
    struct curl_slist *binary_headers, *json_headers;
    cradle_state_pack codec;
    uint8_t *piece;                /* the log header, then one block at a time, after the header */
    size_t piece_size, piece_capacity, piece_filled;
    bool piece_open, piece_after_loss;
    uint8_t header[CRADLE_LOG_HEADER_BYTES];
    bool have_header, start_uploaded;
    uint8_t *check;                /* header + one block: to read its records */
    /* the fragment being built */
    uint8_t *building;
    size_t building_size, building_capacity;
    uint32_t building_first, building_end;
    uint64_t building_since_ns;    /* when the fragment's time began: the last cut, or its first block */
    uint64_t last_cut_ns;          /* 0 before the first cut */
    bool building_trailer;
    uint32_t building_data_count;
    uint8_t building_data_hash[CRADLE_BROADCAST_FRAGMENT_DATA_MAX][CRADLE_LOG_FILE_HASH_BYTES];
    uint32_t building_data_size[CRADLE_BROADCAST_FRAGMENT_DATA_MAX];
    bool building_lost;            /* a block of it was dropped: it becomes a gap */
    /* the queue, oldest first */
    fragment *queue;
    uint32_t queue_head, queue_count;
    uint64_t next_number;          /* of the next fragment cut */
    uint64_t published;            /* fragments 0..published-1 are uploaded or lost */
    /* keyframes */
    uint8_t *encoded;              /* the pending keyframe, encoded */
    size_t encoded_size, encoded_capacity;
    bool encoded_pending;
    cradle_broadcast_keyframe pending;
    uint64_t key_number;
    cradle_broadcast_sync sync;    /* what the sync document says */
    bool sync_dirty;
    uint8_t *data;                 /* one data file's bytes */
    uint64_t retry_at_ns;
    uint32_t backoff_ms;
    bool ended;
    bool closing;                  /* finish() was called: web files are not waited for */
    web_job web;
};

/* ---- the origin's secret ------------------------------------------------- */

int cradle_server_broadcast_read_auth(const char *path, char out[CRADLE_SERVER_BROADCAST_AUTH_MAX + 1],
                                      char *message, size_t message_size) {
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(message, message_size, "cannot open %s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return CRADLE_EIO;
    }
    int rc = 0;
    if (!S_ISREG(st.st_mode)) {
        snprintf(message, message_size, "%s is not a regular file", path);
        rc = CRADLE_EKEY_NOT_REGULAR;
    } else if (st.st_mode & 077) {
        snprintf(message, message_size, "%s is readable by group or others (mode %03o); chmod 600 it", path,
                 (unsigned)(st.st_mode & 0777));
        rc = CRADLE_EKEY_PERMISSIONS;
    } else if (st.st_uid != geteuid()) {
        snprintf(message, message_size, "%s is owned by another user", path);
        rc = CRADLE_EKEY_OWNER;
    }
    char text[CRADLE_SERVER_BROADCAST_AUTH_MAX + 2];
    ssize_t n = rc ? 0 : read(fd, text, sizeof text);
    close(fd);
    if (rc) return rc;
    if (n < 0) {
        snprintf(message, message_size, "cannot read %s: %s", path, strerror(errno));
        return CRADLE_EIO;
    }
    size_t len = (size_t)n;
    if (len > 0 && text[len - 1] == '\n') len--;
    bool ok = len >= 1 && len <= CRADLE_SERVER_BROADCAST_AUTH_MAX;
    for (size_t i = 0; ok && i < len; i++) ok = text[i] > 0x20 && text[i] < 0x7f;
    if (!ok) {
        snprintf(message, message_size, "%s must hold one line of 1..%u printable ASCII bytes without spaces", path,
                 CRADLE_SERVER_BROADCAST_AUTH_MAX);
        return CRADLE_ECONFIG;
    }
    memcpy(out, text, len);
    out[len] = '\0';
    return 0;
}

/* ---- the game thread ----------------------------------------------------- */

void cradle_server_broadcast_written(void *context, const uint8_t *bytes, size_t size) {
    cradle_server_broadcast *b = context;
    uint32_t chunks = (uint32_t)((size + CHUNK_DATA - 1) / CHUNK_DATA);
    /* All or nothing: the count seen here can only overstate what is queued. */
    if (chunks > RING_CHUNKS - cradle_ring_count(&b->ring)) {
        b->piece_lost = true;
        atomic_fetch_add_explicit(&b->lost_pieces, 1, memory_order_relaxed);
        return;
    }
    chunk c;
    for (uint32_t i = 0; i < chunks; i++) {
        size_t at = (size_t)i * CHUNK_DATA, n = size - at < CHUNK_DATA ? size - at : CHUNK_DATA;
        c.kind = i == 0 ? PIECE_FIRST | (b->piece_lost ? PIECE_AFTER_LOSS : 0u) : PIECE_MORE;
        c.size = i == 0 ? (uint32_t)size : (uint32_t)n;
        memcpy(c.bytes, bytes + at, n);
        bool pushed = cradle_ring_push(&b->ring, &c);
        assert(pushed && "room was counted first");
        (void)pushed;
    }
    b->piece_lost = false;
}

bool cradle_server_broadcast_keyframe_due(const cradle_server_broadcast *b, uint64_t step) {
    return step >= b->next_keyframe_step && atomic_load_explicit(&b->keyframe_full, memory_order_acquire) == 0;
}

void cradle_server_broadcast_keyframe(cradle_server_broadcast *b, uint64_t step, uint64_t state_hash,
                                      const void *state, uint32_t state_size, uint32_t block_sequence,
                                      uint64_t block_first_step, const char *build_id) {
    b->next_keyframe_step = step + (uint64_t)b->config.keyframe_s * b->config.steps_per_second;
    if (state_size > b->config.state_capacity) { /* a reload grew the state past what was allocated */
        atomic_fetch_add_explicit(&b->keyframes_skipped, 1, memory_order_relaxed);
        return;
    }
    b->mailbox = (cradle_broadcast_keyframe){.step = step,
                                             .state_hash = state_hash,
                                             .state_size = state_size,
                                             .block_sequence = block_sequence,
                                             .block_first_step = block_first_step};
    snprintf(b->mailbox.build_id, sizeof b->mailbox.build_id, "%s", build_id);
    memcpy(b->mailbox_state, state, state_size);
    atomic_store_explicit(&b->keyframe_full, 1, memory_order_release);
}

void cradle_server_broadcast_live(cradle_server_broadcast *b, uint64_t step) {
    atomic_store_explicit(&b->live_step, step, memory_order_relaxed);
}

/* Under the mutex: the build in charge and what its web files need. A
 * path that does not fit is dropped (no web files) rather than cut. */
static void hand_over_build(cradle_server_broadcast *b, const char *build_id, const char *library,
                            const char *const *sounds, uint32_t sound_count) {
    snprintf(b->build, sizeof b->build, "%s", build_id);
    bool fits = library && strlen(library) < sizeof b->library;
    snprintf(b->library, sizeof b->library, "%s", fits ? library : "");
    if (sound_count > CRADLE_GAME_MAX_SOUNDS) sound_count = CRADLE_GAME_MAX_SOUNDS; /* the contract check's limit */
    b->sound_count = sounds ? sound_count : 0;
    for (uint32_t i = 0; i < b->sound_count; i++) snprintf(b->sounds[i], sizeof b->sounds[i], "%s", sounds[i]);
    b->build_serial++;
}

void cradle_server_broadcast_build(cradle_server_broadcast *b, const char *build_id, const char *library,
                                   const char *const *sounds, uint32_t sound_count) {
    pthread_mutex_lock(&b->mutex);
    hand_over_build(b, build_id, library, sounds, sound_count);
    pthread_mutex_unlock(&b->mutex);
}

void cradle_server_broadcast_get_stats(cradle_server_broadcast *b, cradle_server_broadcast_stats *out) {
    pthread_mutex_lock(&b->mutex);
    *out = b->stats;
    pthread_mutex_unlock(&b->mutex);
    out->lost_pieces = atomic_load_explicit(&b->lost_pieces, memory_order_relaxed);
    out->keyframes_skipped = atomic_load_explicit(&b->keyframes_skipped, memory_order_relaxed);
}

/* ---- the thread: HTTP ---------------------------------------------------- */

static int progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
    (void)dltotal;
    (void)dlnow;
    (void)ultotal;
    (void)ulnow;
    const cradle_server_broadcast *b = user;
    return atomic_load_explicit(&b->abort_transfers, memory_order_relaxed) ? 1 : 0;
}

static size_t discard(char *data, size_t size, size_t count, void *user) {
    (void)data;
    (void)user;
    return size * count;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void set_error(cradle_server_broadcast *b, const char *format, ...) {
    char text[CRADLE_BROADCAST_MESSAGE_MAX];
    va_list args;
    va_start(args, format);
    (void)vsnprintf(text, sizeof text, format, args);
    va_end(args);
    pthread_mutex_lock(&b->mutex);
    memcpy(b->stats.last_error, text, sizeof text);
    pthread_mutex_unlock(&b->mutex);
}

/* PUT body at base + path, giving up after timeout_ms. Returns 0 on a 2xx
 * answer; else keeps the error and returns the HTTP status, or -1 when
 * there was no answer. */
static long put_status(cradle_server_broadcast *b, const char *path, const void *body, size_t size, bool json,
                       long timeout_ms) {
    char url[CRADLE_BROADCAST_URL_MAX + 200];
    snprintf(url, sizeof url, "%s%s", b->base, path);
    curl_easy_setopt(b->curl, CURLOPT_URL, url);
    curl_easy_setopt(b->curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(b->curl, CURLOPT_HTTPHEADER, json ? b->json_headers : b->binary_headers);
    curl_easy_setopt(b->curl, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(b->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)size);
    CURLcode rc = curl_easy_perform(b->curl);
    long status = 0;
    if (rc == CURLE_OK) curl_easy_getinfo(b->curl, CURLINFO_RESPONSE_CODE, &status);
    if (rc == CURLE_OK && status >= 200 && status < 300) {
        pthread_mutex_lock(&b->mutex);
        b->stats.bytes += size;
        b->stats.requests++;
        pthread_mutex_unlock(&b->mutex);
        return 0;
    }
    if (rc != CURLE_OK) set_error(b, "PUT %s: %s", url, curl_easy_strerror(rc));
    else set_error(b, "PUT %s: HTTP %ld%s", url, status, status == 401 || status == 403 ? " (check --broadcast-auth)" : "");
    return rc == CURLE_OK && status > 0 ? status : -1;
}

/* PUT as above with the usual timeout. True on a 2xx answer. */
static bool put(cradle_server_broadcast *b, const char *path, const void *body, size_t size, bool json) {
    return put_status(b, path, body, size, json, REQUEST_TIMEOUT_MS) == 0;
}

/* ---- the thread: fragments ----------------------------------------------- */

static fragment *queue_at(cradle_server_broadcast *b, uint32_t i) {
    return &b->queue[(b->queue_head + i) % b->config.queue];
}

/* Fragment `number` never reaches the origin: a gap (merged with the last
 * one when they touch; the sync document keeps the newest few). */
static void add_gap(cradle_server_broadcast *b, uint64_t number) {
    cradle_broadcast_sync *s = &b->sync;
    if (s->gap_count && s->gaps[s->gap_count - 1].last + 1u == number) {
        s->gaps[s->gap_count - 1].last = number;
    } else {
        if (s->gap_count == CRADLE_BROADCAST_GAPS_MAX) {
            memmove(s->gaps, s->gaps + 1, sizeof s->gaps[0] * (CRADLE_BROADCAST_GAPS_MAX - 1u));
            s->gap_count--;
        }
        s->gaps[s->gap_count++] = (cradle_broadcast_gap){number, number};
    }
    /* a keyframe listed before the gap stays usable; one inside it cannot be */
    pthread_mutex_lock(&b->mutex);
    b->stats.lost++;
    pthread_mutex_unlock(&b->mutex);
}

static void free_fragment(fragment *f) {
    free(f->bytes);
    f->bytes = NULL;
}

/* Puts f at the queue's end; when the queue is full the oldest waiting
 * fragment is lost (a gap) to make room. */
static void enqueue(cradle_server_broadcast *b, fragment f) {
    if (b->queue_count == b->config.queue) {
        fragment *old = queue_at(b, 0);
        if (!old->uploaded) add_gap(b, old->number);
        b->published = old->number + 1u;
        free_fragment(old);
        b->queue_head = (b->queue_head + 1u) % b->config.queue;
        b->queue_count--;
        b->sync_dirty = true;
    }
    *queue_at(b, b->queue_count++) = f;
}

/* The fragment being built goes to the queue; with a block of it lost (or
 * no memory for it), as an entry without bytes, which becomes a gap when
 * its turn to be uploaded comes. */
static void cut(cradle_server_broadcast *b, uint64_t now) {
    if (b->building_size == 0 && !b->building_lost) return;
    fragment f = {.number = b->next_number++,
                  .first_sequence = b->building_first,
                  .end_sequence = b->building_end,
                  .cut_ns = now,
                  .data_count = b->building_data_count,
                  .trailer = b->building_trailer};
    if (!b->building_lost) {
        f.bytes = malloc(b->building_size);
        if (f.bytes) {
            f.size = b->building_size;
            memcpy(f.bytes, b->building, b->building_size);
            memcpy(f.data_hash, b->building_data_hash, sizeof f.data_hash);
            memcpy(f.data_size, b->building_data_size, sizeof f.data_size);
        } else {
            set_error(b, "out of memory for fragment %" PRIu64 ": it is lost", f.number);
        }
    }
    b->building_lost = false;
    b->building_size = 0;
    b->last_cut_ns = now;
    b->building_data_count = 0;
    b->building_trailer = false;
    enqueue(b, f);
}

/* A whole block of the log arrived. */
static void take_block(cradle_server_broadcast *b, const uint8_t *block, size_t size, bool after_loss,
                       uint64_t now) {
    if (after_loss) {
        b->building_lost = true; /* the blocks before this one are missing from the fragment */
        cut(b, now);
    }
    /* Its records: the data files it names (the viewers fetch them), the trailer. */
    memcpy(b->check + CRADLE_LOG_HEADER_BYTES, block, size);
    cradle_broadcast_fragment_info info;
    char why[CRADLE_BROADCAST_MESSAGE_MAX];
    if (cradle_broadcast_fragment_check(b->check, CRADLE_LOG_HEADER_BYTES + size, NULL, NULL, &info, why, sizeof why) != 0) {
        set_error(b, "a log block the writer wrote does not read back: %s", why);
        b->building_lost = true;
        cut(b, now);
        return;
    }
    if (b->building_data_count + info.data_count > CRADLE_BROADCAST_FRAGMENT_DATA_MAX) cut(b, now);
    if (b->building_size + size > CRADLE_BROADCAST_FRAGMENT_MAX) cut(b, now);
    if (b->building_size + size > b->building_capacity) {
        size_t capacity = b->building_capacity * 2u;
        while (capacity < b->building_size + size) capacity *= 2u;
        uint8_t *grown = realloc(b->building, capacity);
        if (!grown) {
            set_error(b, "out of memory for a fragment");
            b->building_lost = true;
            cut(b, now);
            return;
        }
        b->building = grown;
        b->building_capacity = capacity;
    }
    if (b->building_size == 0) {
        b->building_first = info.first.sequence;
        /* A fragment is the log's time since the last cut, not since its
         * own first block: blocks come every fragment_ms / 2, so timing
         * from the first block cut every third block (3 s, not 2). */
        b->building_since_ns = b->last_cut_ns ? b->last_cut_ns : now;
    }
    memcpy(b->building + b->building_size, block, size);
    b->building_size += size;
    b->building_end = info.end.sequence;
    for (uint32_t i = 0; i < info.data_count; i++) {
        memcpy(b->building_data_hash[b->building_data_count], info.data_hash[i], CRADLE_LOG_FILE_HASH_BYTES);
        b->building_data_size[b->building_data_count++] = info.data_size[i];
    }
    if (info.trailer) {
        b->building_trailer = true;
        cut(b, now);
    }
}

/* A whole piece of the log arrived: the header, or a block. */
static void take_piece(cradle_server_broadcast *b, bool after_loss, uint64_t now) {
    if (!b->have_header) {
        if (b->piece_size != CRADLE_LOG_HEADER_BYTES) return; /* cannot happen: the header is written first */
        memcpy(b->header, b->piece, CRADLE_LOG_HEADER_BYTES);
        memcpy(b->check, b->piece, CRADLE_LOG_HEADER_BYTES);
        cradle_broadcast_session_of(b->header, b->sync.session);
        b->have_header = true;
        return;
    }
    take_block(b, b->piece, b->piece_size, after_loss, now);
}

static void drain_ring(cradle_server_broadcast *b, uint64_t now) {
    chunk c;
    while (cradle_ring_pop(&b->ring, &c)) {
        if (c.kind & PIECE_FIRST) {
            b->piece_open = true;
            b->piece_after_loss = (c.kind & PIECE_AFTER_LOSS) != 0;
            b->piece_size = c.size;
            b->piece_filled = 0;
        }
        if (!b->piece_open) continue;
        size_t n = b->piece_size - b->piece_filled < CHUNK_DATA ? b->piece_size - b->piece_filled : CHUNK_DATA;
        if (b->piece_filled + n > b->piece_capacity) { /* larger than any block: the writer's contract broke */
            b->piece_open = false;
            continue;
        }
        memcpy(b->piece + b->piece_filled, c.bytes, n);
        b->piece_filled += n;
        if (b->piece_filled == b->piece_size) {
            b->piece_open = false;
            take_piece(b, b->piece_after_loss, now);
        }
    }
}

/* ---- the thread: keyframes ----------------------------------------------- */

static void take_mailbox(cradle_server_broadcast *b) {
    if (atomic_load_explicit(&b->keyframe_full, memory_order_acquire) == 0) return;
    cradle_broadcast_keyframe k = b->mailbox;
    memcpy(k.session, b->sync.session, sizeof k.session);
    char why[CRADLE_BROADCAST_MESSAGE_MAX];
    int rc = cradle_broadcast_keyframe_encode(&b->codec, &k, b->mailbox_state, b->signing ? b->sign_secret : NULL,
                                              b->encoded, b->encoded_capacity,
                                              &b->encoded_size, why, sizeof why);
    atomic_store_explicit(&b->keyframe_full, 0, memory_order_release);
    if (rc != 0) {
        set_error(b, "%s", why);
        return;
    }
    b->pending = k;
    b->encoded_pending = true; /* a newer keyframe replaces one not yet uploaded */
}

/* The keyframe's block is in fragment f (uploaded): its reference. */
static void publish_keyframe(cradle_server_broadcast *b, uint64_t fragment_number) {
    cradle_broadcast_sync *s = &b->sync;
    if (s->keyframe_count == CRADLE_BROADCAST_KEYFRAMES_MAX) {
        memmove(s->keyframes, s->keyframes + 1, sizeof s->keyframes[0] * (CRADLE_BROADCAST_KEYFRAMES_MAX - 1u));
        s->keyframe_count--;
    }
    s->keyframes[s->keyframe_count++] =
        (cradle_broadcast_keyframe_ref){.key = b->key_number, .step = b->pending.step, .fragment = fragment_number};
    b->key_number++;
    b->encoded_pending = false;
    pthread_mutex_lock(&b->mutex);
    b->stats.keyframes++;
    pthread_mutex_unlock(&b->mutex);
}

/* ---- the thread: the browser viewer's files ------------------------------ */

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void set_web(cradle_server_broadcast *b, const char *format, ...) {
    char text[sizeof b->stats.web];
    va_list args;
    va_start(args, format);
    (void)vsnprintf(text, sizeof text, format, args);
    va_end(args);
    pthread_mutex_lock(&b->mutex);
    memcpy(b->stats.web, text, sizeof text);
    pthread_mutex_unlock(&b->mutex);
}

/* The build's twin: the library's path with ".wasm" for its ".so" (added
 * to a library named otherwise). */
static bool twin_path(const char *library, char *out, size_t size) {
    size_t n = strlen(library);
    if (n > 3 && strcmp(library + n - 3, ".so") == 0) n -= 3;
    int w = snprintf(out, size, "%.*s.wasm", (int)n, library);
    return w >= 0 && (size_t)w < size;
}

/* A sound file: its contract name relative to the library's folder, as the
 * client reads it (client/src/audio.c). */
static bool sound_path(const char *library, const char *name, char *out, size_t size) {
    const char *slash = strrchr(library, '/');
    int w = slash ? snprintf(out, size, "%.*s/%s", (int)(slash - library), library, name)
                  : snprintf(out, size, "%s", name);
    return w >= 0 && (size_t)w < size;
}

static bool same_file(const file_identity *a, const file_identity *b) {
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec &&
           a->mtime.tv_nsec == b->mtime.tv_nsec;
}

static file_identity identity_of(const struct stat *st) {
    return (file_identity){.dev = st->st_dev, .ino = st->st_ino, .size = st->st_size, .mtime = st->st_mtim};
}

enum { READ_OK, READ_MISSING, READ_REFUSED };

/* Reads path whole into a new buffer (*out: the caller frees it): a regular
 * file of at most CRADLE_BROADCAST_WEB_FILE_MAX bytes that does not change
 * while it is read. Returns READ_OK, READ_MISSING (no such file) or
 * READ_REFUSED with why. *id (id may be NULL) receives what the file was,
 * when it could be opened. */
static int read_whole(const char *path, uint8_t **out, size_t *size, file_identity *id, char *why, size_t why_size) {
    *out = NULL;
    *size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR) return READ_MISSING;
        snprintf(why, why_size, "cannot open %s: %s", path, strerror(errno));
        return READ_REFUSED;
    }
    int rc = READ_REFUSED;
    uint8_t *bytes = NULL;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(why, why_size, "cannot stat %s: %s", path, strerror(errno));
        goto out_close;
    }
    if (id) *id = identity_of(&st);
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, why_size, "%s is not a regular file", path);
        goto out_close;
    }
    if (st.st_size > (off_t)CRADLE_BROADCAST_WEB_FILE_MAX) {
        snprintf(why, why_size, "%s is %lld bytes, more than the %u a web file may have", path,
                 (long long)st.st_size, CRADLE_BROADCAST_WEB_FILE_MAX);
        goto out_close;
    }
    size_t n = (size_t)st.st_size, got = 0;
    bytes = malloc(n ? n : 1);
    if (!bytes) {
        snprintf(why, why_size, "out of memory for the %zu bytes of %s", n, path);
        goto out_close;
    }
    while (got < n) {
        ssize_t r = read(fd, bytes + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    uint8_t more;
    ssize_t after = got == n ? read(fd, &more, 1) : -1;
    if (got != n || after != 0) { /* shorter or longer than fstat said: being written */
        snprintf(why, why_size, "%s changed while it was read", path);
        goto out_close;
    }
    *out = bytes;
    *size = n;
    bytes = NULL;
    rc = READ_OK;
out_close:
    free(bytes);
    close(fd);
    return rc;
}

/* Takes the build in charge, its library and sounds when build() changed
 * them: a new job, whatever the old one was doing (its files may be gone
 * with the rebuild; those already up stay, named by their bytes). */
static void web_follow(cradle_server_broadcast *b) {
    web_job *j = &b->web;
    pthread_mutex_lock(&b->mutex);
    if (b->build_serial != j->serial) {
        j->serial = b->build_serial;
        memcpy(j->build, b->build, sizeof j->build);
        memcpy(j->library, b->library, sizeof j->library);
        j->sound_count = b->sound_count;
        for (uint32_t i = 0; i < j->sound_count; i++) memcpy(j->sounds[i], b->sounds[i], sizeof j->sounds[i]);
        j->state = j->library[0] ? WEB_PREPARE : WEB_OFF;
        snprintf(b->stats.web, sizeof b->stats.web, "%s", j->library[0] ? "waiting" : "off");
    }
    pthread_mutex_unlock(&b->mutex);
}

static void web_wait(cradle_server_broadcast *b, uint32_t ms, bool when_changed) {
    b->web.state = WEB_WAITING;
    b->web.recheck_ns = cradle_mono_ns() + (uint64_t)ms * 1000000u;
    b->web.when_changed = when_changed;
}

/* The twin the job last read is still the same file (a refused one is not
 * read again until it changes). */
static bool twin_unchanged(const web_job *j) {
    char path[CRADLE_SERVER_BROADCAST_PATH_MAX + 8];
    struct stat st;
    if (!twin_path(j->library, path, sizeof path) || stat(path, &st) != 0) return false;
    file_identity now = identity_of(&st);
    return same_file(&now, &j->identity);
}

/* A payload shown in a message: printable bytes, the rest as '?'. */
static void printable_copy(char *out, size_t size, const uint8_t *bytes, size_t n) {
    size_t i = 0;
    for (; i < n && i + 1 < size; i++) out[i] = bytes[i] >= 0x20 && bytes[i] < 0x7f ? (char)bytes[i] : '?';
    out[i] = '\0';
}

/* Whether the twin in bytes is the job's build's; else status says why. */
static bool twin_is_ours(cradle_server_broadcast *b, const char *path, const uint8_t *bytes, size_t n) {
    const web_job *j = &b->web;
    const uint8_t *payload;
    size_t payload_size;
    char problem[CRADLE_BROADCAST_MESSAGE_MAX];
    int rc = cradle_wasm_custom_section(bytes, n, "cradle_build", &payload, &payload_size, problem, sizeof problem);
    if (rc == CRADLE_EWASM) {
        set_web(b, "refused: %s is no WebAssembly module: %s", path, problem);
        return false;
    }
    if (rc != 0) {
        set_web(b, "refused: %s names no build (no custom section \"cradle_build\")", path);
        return false;
    }
    if (payload_size == strlen(j->build) && memcmp(payload, j->build, payload_size) == 0) return true;
    char other[CRADLE_GAME_BUILD_ID_MAX + 1];
    printable_copy(other, sizeof other, payload, payload_size);
    set_web(b, "refused: %s is the twin of build \"%s%s\", not of \"%s\", the build in charge", path, other,
            payload_size >= sizeof other ? "..." : "", j->build);
    return false;
}

/* Hashes the job's sound files; one missing or unreadable is listed as
 * missing (its id keeps its place). Returns how many are missing and the
 * first one's path in first_missing. */
static uint32_t hash_sounds(cradle_server_broadcast *b, char *first_missing, size_t size) {
    web_job *j = &b->web;
    uint32_t missing = 0;
    first_missing[0] = '\0';
    for (uint32_t i = 0; i < j->sound_count; i++) {
        cradle_broadcast_web_file *f = &j->sound[i];
        *f = (cradle_broadcast_web_file){.present = false};
        char path[CRADLE_SERVER_BROADCAST_PATH_MAX + CRADLE_GAME_SOUND_NAME_MAX + 2], why[CRADLE_BROADCAST_MESSAGE_MAX];
        uint8_t *bytes = NULL;
        size_t n = 0;
        bool named = sound_path(j->library, j->sounds[i], path, sizeof path);
        int r = named ? read_whole(path, &bytes, &n, NULL, why, sizeof why) : READ_MISSING;
        if (r == READ_OK) {
            f->present = true;
            f->bytes = (uint32_t)n;
            crypto_hash_sha256(f->sha256, bytes, n);
            free(bytes);
            continue;
        }
        if (r == READ_REFUSED) set_error(b, "web: sound %" PRIu32 ": %s", i + 1u, why);
        if (missing++ == 0) snprintf(first_missing, size, "%s", path);
    }
    return missing;
}

/* Reads, checks and hashes the twin and the sounds, and writes the
 * manifest: UPLOADING next, or WAITING with status saying why not. */
static void web_prepare(cradle_server_broadcast *b) {
    web_job *j = &b->web;
    for (uint32_t i = 0; i < b->sync.web_count; i++) {
        if (strcmp(b->sync.web[i].build, j->build) == 0) { /* listed already: a reload back to it */
            j->state = WEB_DONE;
            set_web(b, "ok");
            return;
        }
    }
    char path[CRADLE_SERVER_BROADCAST_PATH_MAX + 8], why[CRADLE_BROADCAST_MESSAGE_MAX * 2];
    bool fits = twin_path(j->library, path, sizeof path);
    assert(fits && "a library path of CRADLE_SERVER_BROADCAST_PATH_MAX has room for the suffix");
    (void)fits;
    uint8_t *bytes;
    size_t n;
    int r = read_whole(path, &bytes, &n, &j->identity, why, sizeof why);
    if (r != READ_OK) {
        if (r == READ_MISSING) set_web(b, "none: %s missing", path);
        else set_web(b, "refused: %s", why);
        web_wait(b, WEB_RECHECK_MS, r == READ_REFUSED);
        return;
    }
    bool ours = twin_is_ours(b, path, bytes, n);
    if (ours) {
        j->wasm = (cradle_broadcast_web_file){.present = true, .bytes = (uint32_t)n};
        crypto_hash_sha256(j->wasm.sha256, bytes, n);
    }
    free(bytes);
    if (!ours) {
        web_wait(b, WEB_RECHECK_MS, true);
        return;
    }
    char first_missing[CRADLE_SERVER_BROADCAST_PATH_MAX + CRADLE_GAME_SOUND_NAME_MAX + 2];
    j->sounds_missing = hash_sounds(b, first_missing, sizeof first_missing);
    const char *names[CRADLE_GAME_MAX_SOUNDS];
    for (uint32_t i = 0; i < j->sound_count; i++) names[i] = j->sounds[i];
    cradle_broadcast_web_manifest m = {.game = b->sync.game,
                                       .build = j->build,
                                       .wasm = j->wasm,
                                       .sound_count = j->sound_count,
                                       .sound_names = names,
                                       .sounds = j->sound};
    j->manifest_size = cradle_broadcast_web_manifest_encode(&m, j->manifest, CRADLE_BROADCAST_WEB_MANIFEST_MAX);
    assert(j->manifest_size > 0 && "the largest manifest fits");
    crypto_hash_sha256(j->manifest_hash, (const uint8_t *)j->manifest, j->manifest_size);
    if (j->sounds_missing)
        set_web(b, "waiting (%" PRIu32 " of %" PRIu32 " sound files missing, listed so: %s%s)", j->sounds_missing,
                j->sound_count, first_missing, j->sounds_missing > 1 ? ", ..." : "");
    j->state = WEB_UPLOADING;
    j->next = 0;
    j->failures = 0;
}

/* The job's files are up: its build goes in the sync document's list. */
static void web_publish(cradle_server_broadcast *b) {
    web_job *j = &b->web;
    cradle_broadcast_sync *s = &b->sync;
    if (s->web_count == CRADLE_BROADCAST_WEB_MAX) {
        memmove(s->web, s->web + 1, sizeof s->web[0] * (CRADLE_BROADCAST_WEB_MAX - 1u));
        s->web_count--;
    }
    cradle_broadcast_web *w = &s->web[s->web_count++];
    memcpy(w->build, j->build, sizeof w->build);
    memcpy(w->manifest, j->manifest_hash, sizeof w->manifest);
    b->sync_dirty = true;
    j->state = WEB_DONE;
    if (j->sounds_missing)
        set_web(b, "ok (%" PRIu32 " of %" PRIu32 " sound files missing)", j->sounds_missing, j->sound_count);
    else
        set_web(b, "ok");
}

/* PUTs the job's next file: the twin, each sound there is, the manifest.
 * A file is read again and must still have the bytes hashed: a URL names
 * its bytes forever. Returns 1 when one went up; 0 when the job stopped (a
 * file changed: prepared again; the origin refused it or failed too often:
 * waiting); -1 when the PUT failed (the caller backs off). */
static int web_put_next(cradle_server_broadcast *b) {
    web_job *j = &b->web;
    while (j->next >= 1u && j->next <= j->sound_count && !j->sound[j->next - 1u].present) j->next++;
    uint8_t *bytes = NULL;
    const void *body = j->manifest;
    size_t n = j->manifest_size;
    const uint8_t *hash = j->manifest_hash;
    char file[CRADLE_SERVER_BROADCAST_PATH_MAX + CRADLE_GAME_SOUND_NAME_MAX + 2];
    if (j->next <= j->sound_count) {
        const cradle_broadcast_web_file *f = j->next == 0 ? &j->wasm : &j->sound[j->next - 1u];
        bool named = j->next == 0 ? twin_path(j->library, file, sizeof file)
                                  : sound_path(j->library, j->sounds[j->next - 1u], file, sizeof file);
        char why[CRADLE_BROADCAST_MESSAGE_MAX];
        uint8_t sum[CRADLE_BROADCAST_WEB_HASH_BYTES];
        bool same = named && read_whole(file, &bytes, &n, NULL, why, sizeof why) == READ_OK && n == f->bytes;
        if (same) crypto_hash_sha256(sum, bytes, n);
        if (!same || sodium_memcmp(sum, f->sha256, sizeof sum) != 0) {
            free(bytes);
            j->state = WEB_PREPARE; /* changed since it was hashed: everything again */
            return 0;
        }
        body = bytes;
        hash = f->sha256;
    }
    char path[160];
    int u = cradle_broadcast_url(path, sizeof path, "", CRADLE_BROADCAST_WEB, 0, hash);
    assert(u == 0);
    (void)u;
    bool manifest = j->next > j->sound_count;
    long status = put_status(b, path, body, n, manifest, REQUEST_TIMEOUT_MS + (long)(n / WEB_MIN_BYTES_PER_MS));
    free(bytes);
    if (status == 0) {
        j->failures = 0;
        if (j->next++ == j->sound_count + 1u) web_publish(b);
        return 1;
    }
    /* A refusal will not change on its own; a failure might (an outage). */
    bool refused = status >= 400 && status < 500 && status != 408 && status != 429;
    if (!refused && ++j->failures < WEB_FAILURES_MAX) return -1;
    if (refused)
        set_web(b, "refused: the origin answers HTTP %ld to PUT %s (does it take web/ files?)", status, path);
    else
        set_web(b, "refused: PUT %s failed %u times in a row (broadcast_last_error says why)", path,
                (unsigned)WEB_FAILURES_MAX);
    web_wait(b, WEB_RETRY_MS, false);
    return 0;
}

/* The build in charge's web files, a step at a time before anything else
 * goes up (so the sync document that names a build lists its manifest when
 * there is one). Returns as upload_next(). */
static int web_step(cradle_server_broadcast *b, uint64_t now) {
    web_job *j = &b->web;
    if (b->closing) return 0; /* the session's last fragments first; a viewer of the end has the build */
    if (j->state == WEB_WAITING) {
        if (now < j->recheck_ns) return 0;
        if (j->when_changed && twin_unchanged(j)) {
            j->recheck_ns = now + (uint64_t)WEB_RECHECK_MS * 1000000u;
            return 0;
        }
        j->state = WEB_PREPARE;
    }
    if (j->state == WEB_PREPARE) web_prepare(b);
    if (j->state != WEB_UPLOADING) return 0;
    return web_put_next(b);
}

/* ---- the thread: uploads ------------------------------------------------- */

static bool upload_sync(cradle_server_broadcast *b) {
    cradle_broadcast_sync *s = &b->sync;
    /* the build web_follow() took: its web files went first */
    snprintf(s->build, sizeof s->build, "%s", b->web.build);
    s->fragments = b->published;
    s->live_step = atomic_load_explicit(&b->live_step, memory_order_relaxed);
    s->live_unix_ms = cradle_wall_ns() / 1000000u;
    char text[CRADLE_BROADCAST_SYNC_MAX];
    size_t n = cradle_broadcast_sync_encode(s, text, sizeof text);
    assert(n > 0 && "a sync document of bounded lists fits");
    if (!put(b, "sync", text, n, true)) return false;
    b->sync_dirty = false;
    return true;
}

/* The next upload in order. Returns 1 when one was made, 0 when nothing is
 * waiting, -1 when a PUT failed (the caller backs off). */
static int upload_next(cradle_server_broadcast *b) {
    char path[160];
    if (b->have_header && !b->start_uploaded) {
        if (!put(b, "start", b->header, sizeof b->header, false)) return -1;
        b->start_uploaded = true;
        return 1;
    }
    if (!b->start_uploaded) return 0;
    web_follow(b);
    int w = web_step(b, cradle_mono_ns());
    if (w != 0) return w;
    if (b->queue_count > 0) {
        fragment *f = queue_at(b, 0);
        if (f->bytes && !f->uploaded) {
            while (f->data_done < f->data_count) {
                const uint8_t *hash = f->data_hash[f->data_done];
                char why[CRADLE_LOG_MESSAGE_MAX + CRADLE_LOG_PATH_MAX];
                int rc = cradle_log_read_data(b->config.log_path, hash, f->data_size[f->data_done], b->data,
                                              CRADLE_GAME_DATA_MAX_BYTES, why, sizeof why);
                if (rc != 0) {
                    set_error(b, "data file for fragment %" PRIu64 ": %s", f->number, why);
                    f->data_done++; /* viewers of that change will report it missing */
                    continue;
                }
                int u = cradle_broadcast_url(path, sizeof path, "", CRADLE_BROADCAST_DATA, 0, hash);
                assert(u == 0);
                (void)u;
                if (!put(b, path, b->data, f->data_size[f->data_done], false)) return -1;
                f->data_done++;
            }
            int u = cradle_broadcast_url(path, sizeof path, "", CRADLE_BROADCAST_FRAGMENT, f->number, NULL);
            assert(u == 0);
            (void)u;
            if (!put(b, path, f->bytes, f->size, false)) return -1;
            f->uploaded = true;
            pthread_mutex_lock(&b->mutex);
            b->stats.fragments++;
            pthread_mutex_unlock(&b->mutex);
        }
        if (f->bytes && b->encoded_pending && b->pending.block_sequence >= f->first_sequence &&
            b->pending.block_sequence < f->end_sequence) {
            int u = cradle_broadcast_url(path, sizeof path, "", CRADLE_BROADCAST_KEYFRAME, b->key_number, NULL);
            assert(u == 0);
            (void)u;
            if (!put(b, path, b->encoded, b->encoded_size, false)) return -1;
            publish_keyframe(b, f->number);
        } else if (b->encoded_pending && f->bytes && b->pending.block_sequence < f->first_sequence) {
            b->encoded_pending = false; /* its block was lost before any fragment held it */
        }
        if (!f->bytes) add_gap(b, f->number);
        if (f->trailer) b->ended = true;
        b->published = f->number + 1u;
        free_fragment(f);
        b->queue_head = (b->queue_head + 1u) % b->config.queue;
        b->queue_count--;
        b->sync_dirty = true;
    }
    if (b->sync_dirty) {
        b->sync.ended = b->ended;
        if (!upload_sync(b)) return -1;
        return 1;
    }
    return 0;
}

static void update_state(cradle_server_broadcast *b, const char *state, uint64_t now) {
    pthread_mutex_lock(&b->mutex);
    b->stats.state = state;
    b->stats.queued = b->queue_count;
    b->stats.behind_ms = b->queue_count ? (now - queue_at(b, 0)->cut_ns) / 1000000u : 0;
    cradle_writer w;
    cradle_writer_init(&w, b->stats.gaps, sizeof b->stats.gaps - 1u);
    cradle_writer_text(&w, "[");
    for (uint32_t i = 0; i < b->sync.gap_count; i++)
        cradle_writer_format(&w, "%s[%" PRIu64 ",%" PRIu64 "]", i ? "," : "", b->sync.gaps[i].first,
                             b->sync.gaps[i].last);
    cradle_writer_text(&w, "]");
    b->stats.gaps[w.overflow ? 0 : w.length] = '\0';
    if (w.overflow) snprintf(b->stats.gaps, sizeof b->stats.gaps, "[]");
    pthread_mutex_unlock(&b->mutex);
}

static void *broadcast_main(void *arg) {
    cradle_os_name_thread("broadcast");
    cradle_server_broadcast *b = arg;
    for (;;) {
        uint64_t now = cradle_mono_ns();
        drain_ring(b, now);
        take_mailbox(b);
        if (b->building_size && now - b->building_since_ns >= (uint64_t)b->config.fragment_ms * 1000000u) cut(b, now);
        pthread_mutex_lock(&b->mutex);
        bool stop = b->stop, finishing = b->finishing;
        pthread_mutex_unlock(&b->mutex);
        if (stop) break;
        if (finishing) cut(b, now); /* the trailer's fragment was cut already; anything before it goes too */
        b->closing = finishing;
        int rc = 0;
        while (now >= b->retry_at_ns && (rc = upload_next(b)) == 1) {
            b->backoff_ms = 0;
            now = cradle_mono_ns();
            drain_ring(b, now); /* keep the game thread's ring empty between PUTs */
            take_mailbox(b);
        }
        if (rc < 0) {
            b->backoff_ms = b->backoff_ms ? b->backoff_ms * 2u : BACKOFF_FIRST_MS;
            if (b->backoff_ms > BACKOFF_MAX_MS) b->backoff_ms = BACKOFF_MAX_MS;
            b->retry_at_ns = cradle_mono_ns() + (uint64_t)b->backoff_ms * 1000000u;
            pthread_mutex_lock(&b->mutex);
            b->stats.retries++;
            pthread_mutex_unlock(&b->mutex);
        }
        bool idle = b->queue_count == 0 && !b->sync_dirty && b->start_uploaded && b->building_size == 0;
        update_state(b, b->ended && idle ? "ended" : b->backoff_ms ? "retrying" : b->start_uploaded ? "ok" : "starting",
                     now);
        pthread_mutex_lock(&b->mutex);
        if (finishing && idle && cradle_ring_count(&b->ring) == 0) {
            b->done = true;
            pthread_cond_broadcast(&b->cond);
        }
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += POLL_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        if (!b->stop) (void)pthread_cond_timedwait(&b->cond, &b->mutex, &until);
        pthread_mutex_unlock(&b->mutex);
    }
    return NULL;
}

/* ---- start and stop ------------------------------------------------------ */

static int fail_start(cradle_server_broadcast *b, int code, char *message, size_t message_size, const char *text) {
    snprintf(message, message_size, "%s", text);
    cradle_server_broadcast_stop(b);
    return code;
}

int cradle_server_broadcast_start(cradle_server_broadcast **out, const cradle_server_broadcast_config *config,
                                  char *message, size_t message_size) {
    *out = NULL;
    cradle_server_broadcast *b = aligned_alloc(CRADLE_RING_CACHE_LINE,
                                               (sizeof *b + CRADLE_RING_CACHE_LINE - 1u) / CRADLE_RING_CACHE_LINE *
                                                   CRADLE_RING_CACHE_LINE);
    if (!b) return fail_start(NULL, CRADLE_ENOMEM, message, message_size, "out of memory");
    memset(b, 0, sizeof *b);
    b->config = *config;
    b->config.sign_secret = NULL; /* the copy below is the one kept */
    if (config->sign_secret) {
        b->signing = true;
        memcpy(b->sign_secret, config->sign_secret, sizeof b->sign_secret);
    }
    if (!b->config.fragment_ms) b->config.fragment_ms = CRADLE_SERVER_BROADCAST_FRAGMENT_MS;
    if (!b->config.keyframe_s) b->config.keyframe_s = CRADLE_SERVER_BROADCAST_KEYFRAME_S;
    if (!b->config.queue) b->config.queue = CRADLE_SERVER_BROADCAST_QUEUE;
    pthread_mutex_init(&b->mutex, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&b->cond, &attr);
    pthread_condattr_destroy(&attr);
    b->stats.state = "starting";
    snprintf(b->stats.gaps, sizeof b->stats.gaps, "[]");
    size_t n = strlen(config->url);
    if (n + 2 > sizeof b->base) return fail_start(b, CRADLE_ERANGE, message, message_size, "the URL is too long");
    snprintf(b->base, sizeof b->base, "%s%s", config->url, n && config->url[n - 1] == '/' ? "" : "/");
    size_t ring_bytes = cradle_ring_storage_bytes(RING_CHUNKS, sizeof(chunk));
    b->ring_storage = aligned_alloc(CRADLE_RING_CACHE_LINE, ring_bytes);
    b->mailbox_state = malloc(config->state_capacity);
    b->piece_capacity = CRADLE_LOG_HEADER_BYTES + CRADLE_LOG_BLOCK_HEADER_BYTES + (size_t)config->block_max;
    b->piece = malloc(b->piece_capacity);
    b->check = malloc(CRADLE_LOG_HEADER_BYTES + b->piece_capacity);
    b->building_capacity = 64u << 10;
    b->building = malloc(b->building_capacity);
    b->queue = calloc(b->config.queue, sizeof *b->queue);
    b->encoded_capacity = cradle_broadcast_keyframe_bound(config->state_capacity);
    b->encoded = malloc(b->encoded_capacity);
    b->data = malloc(CRADLE_GAME_DATA_MAX_BYTES);
    b->web.manifest = malloc(CRADLE_BROADCAST_WEB_MANIFEST_MAX);
    if (!b->ring_storage || !b->mailbox_state || !b->piece || !b->check || !b->building || !b->queue || !b->encoded ||
        !b->data || !b->web.manifest ||
        cradle_ring_init(&b->ring, b->ring_storage, ring_bytes, RING_CHUNKS, sizeof(chunk)) != 0 ||
        cradle_state_pack_init(&b->codec, 0, CRADLE_STATE_PACK_BOTH) != 0)
        return fail_start(b, CRADLE_ENOMEM, message, message_size, "out of memory for the broadcast's buffers");
    b->curl = curl_easy_init();
    if (!b->curl) return fail_start(b, CRADLE_ENOMEM, message, message_size, "cannot create a libcurl handle");
    char auth[CRADLE_SERVER_BROADCAST_AUTH_MAX + 32] = "";
    if (config->auth && config->auth[0]) snprintf(auth, sizeof auth, "X-Origin-Auth: %s", config->auth);
    b->binary_headers = curl_slist_append(NULL, "Content-Type: application/octet-stream");
    b->binary_headers = curl_slist_append(b->binary_headers, "Expect:");
    b->json_headers = curl_slist_append(NULL, "Content-Type: application/json");
    b->json_headers = curl_slist_append(b->json_headers, "Expect:");
    if (auth[0]) {
        b->binary_headers = curl_slist_append(b->binary_headers, auth);
        b->json_headers = curl_slist_append(b->json_headers, auth);
    }
    sodium_memzero(auth, sizeof auth);
    if (!b->binary_headers || !b->json_headers)
        return fail_start(b, CRADLE_ENOMEM, message, message_size, "out of memory for the HTTP headers");
    curl_easy_setopt(b->curl, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(b->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(b->curl, CURLOPT_CONNECTTIMEOUT_MS, (long)CONNECT_TIMEOUT_MS);
    curl_easy_setopt(b->curl, CURLOPT_TIMEOUT_MS, (long)REQUEST_TIMEOUT_MS);
    curl_easy_setopt(b->curl, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(b->curl, CURLOPT_XFERINFOFUNCTION, progress);
    curl_easy_setopt(b->curl, CURLOPT_XFERINFODATA, b);
    curl_easy_setopt(b->curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(b->curl, CURLOPT_PROTOCOLS_STR, "http,https");
    b->sync.steps_per_second = config->steps_per_second;
    b->sync.fragment_ms = b->config.fragment_ms;
    snprintf(b->sync.game, sizeof b->sync.game, "%s", config->game);
    hand_over_build(b, config->build, config->library, config->sounds, config->sound_count);
    snprintf(b->stats.web, sizeof b->stats.web, "%s", b->library[0] ? "waiting" : "off");
    b->config.library = NULL; /* copied: the caller's may not outlive a reload */
    b->config.sounds = NULL;
    b->config.sound_count = 0;
    if (pthread_create(&b->thread, NULL, broadcast_main, b) != 0)
        return fail_start(b, CRADLE_ENOMEM, message, message_size, "cannot start the broadcast thread");
    b->thread_started = true;
    *out = b;
    return 0;
}

bool cradle_server_broadcast_finish(cradle_server_broadcast *b, uint32_t timeout_ms) {
    if (!b) return true;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += timeout_ms / 1000u;
    until.tv_nsec += (long)(timeout_ms % 1000u) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&b->mutex);
    b->finishing = true;
    pthread_cond_broadcast(&b->cond);
    int rc = 0;
    while (!b->done && rc == 0) rc = pthread_cond_timedwait(&b->cond, &b->mutex, &until);
    bool done = b->done;
    pthread_mutex_unlock(&b->mutex);
    return done;
}

void cradle_server_broadcast_stop(cradle_server_broadcast *b) {
    if (!b) return;
    if (b->thread_started) {
        pthread_mutex_lock(&b->mutex);
        b->stop = true;
        atomic_store(&b->abort_transfers, true);
        pthread_cond_broadcast(&b->cond);
        pthread_mutex_unlock(&b->mutex);
        pthread_join(b->thread, NULL);
    }
    for (uint32_t i = 0; b->queue && i < b->queue_count; i++) free_fragment(queue_at(b, i));
    if (b->curl) curl_easy_cleanup(b->curl);
    curl_slist_free_all(b->binary_headers);
    curl_slist_free_all(b->json_headers);
    cradle_state_pack_free(&b->codec);
    free(b->ring_storage);
    free(b->mailbox_state);
    free(b->piece);
    free(b->check);
    free(b->building);
    free(b->queue);
    free(b->encoded);
    free(b->data);
    free(b->web.manifest);
    pthread_cond_destroy(&b->cond);
    pthread_mutex_destroy(&b->mutex);
    sodium_memzero(b->sign_secret, sizeof b->sign_secret);
    free(b);
}
