/*
 * broadcast_mirror: a viewer's copy of a broadcast as a session log (see
 * broadcast_mirror.h): a follower (broadcast_follow.h) decides what to
 * fetch; this file fetches it, and writes segments and data files.
 */
#include "cradle/broadcast_mirror.h"

#include <assert.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cradle/broadcast_follow.h"
#include "cradle/os.h"
#include "cradle/systime.h"

enum {
    CONNECT_TIMEOUT_MS = 2000,
    REQUEST_TIMEOUT_MS = 10000,
    DEFAULT_STATE_CAPACITY = 64u << 20,
};

struct cradle_broadcast_mirror {
    cradle_broadcast_mirror_config config;
    char base[CRADLE_BROADCAST_URL_MAX];
    bool pinned;
    uint8_t verify_key[32];
    pthread_t thread;
    bool thread_started;
    atomic_bool stop;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    cradle_broadcast_mirror_view view; /* under mutex */
    uint8_t *key_state;                /* the segment's keyframe state, under mutex */
    uint32_t key_state_size;
    /* the thread's own */
    cradle_broadcast_follow_config follow_config;
    cradle_broadcast_follow follow;    /* where the mirror is in the broadcast */
    CURL *curl;
    cradle_state_pack codec;
    uint8_t *buffer;                   /* start + one fragment */
    uint8_t *doc;                      /* a keyframe or a data file */
    size_t doc_capacity;
    uint8_t *state;                    /* the follower's keyframe's state, decoded */
    uint32_t state_size;
    char state_build[CRADLE_GAME_BUILD_ID_MAX + 1];
    int fd;                            /* the segment's log, -1 when none */
    uint32_t segment;                  /* the segment fd is (follow.segment once opened) */
    size_t unwritten;                  /* bytes of a verified fragment in buffer not in the log yet */
    cradle_broadcast_fragment_info unwritten_info;
};

/* ---- HTTP --------------------------------------------------------------- */

typedef struct sink {
    uint8_t *out;
    size_t capacity, length;
    bool overflow;
} sink;

static size_t take(char *data, size_t size, size_t count, void *user) {
    sink *s = user;
    size_t n = size * count;
    if (n > s->capacity - s->length) {
        s->overflow = true;
        return 0; /* libcurl stops the transfer */
    }
    memcpy(s->out + s->length, data, n);
    s->length += n;
    return n;
}

static int progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
    (void)dltotal;
    (void)dlnow;
    (void)ultotal;
    (void)ulnow;
    const atomic_bool *stop = user;
    return stop && atomic_load_explicit(stop, memory_order_relaxed) ? 1 : 0;
}

int cradle_broadcast_get(void *handle, const char *url, uint8_t *out, size_t capacity, size_t *length, char *message,
                         size_t message_size) {
    CURL *curl = handle;
    sink s = {.out = out, .capacity = capacity};
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, take);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &s);
    CURLcode rc = curl_easy_perform(curl);
    long status = 0;
    if (rc == CURLE_OK) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    if (rc == CURLE_OK && status == 200) {
        *length = s.length;
        return 0;
    }
    if (s.overflow) snprintf(message, message_size, "GET %s: more than %zu bytes", url, capacity);
    else if (rc != CURLE_OK) snprintf(message, message_size, "GET %s: %s", url, curl_easy_strerror(rc));
    else snprintf(message, message_size, "GET %s: HTTP %ld", url, status);
    return CRADLE_EIO;
}

/* ---- the view ----------------------------------------------------------- */

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void note(cradle_broadcast_mirror *m, bool refused, const char *format, ...) {
    char text[CRADLE_BROADCAST_MESSAGE_MAX];
    va_list args;
    va_start(args, format);
    (void)vsnprintf(text, sizeof text, format, args);
    va_end(args);
    pthread_mutex_lock(&m->mutex);
    memcpy(m->view.error, text, sizeof text);
    if (refused) m->view.refused++;
    else m->view.failures++;
    pthread_mutex_unlock(&m->mutex);
}

/* GET base + path, counted in the view. */
static int get(cradle_broadcast_mirror *m, const char *path, uint8_t *out, size_t capacity, size_t *length) {
    char url[CRADLE_BROADCAST_URL_MAX + 200], why[CRADLE_BROADCAST_MESSAGE_MAX];
    snprintf(url, sizeof url, "%s%s", m->base, path);
    int rc = cradle_broadcast_get(m->curl, url, out, capacity, length, why, sizeof why);
    pthread_mutex_lock(&m->mutex);
    m->view.requests++;
    if (rc == 0) m->view.bytes_fetched += *length;
    pthread_mutex_unlock(&m->mutex);
    if (rc != 0) note(m, false, "%s", why);
    return rc;
}

void cradle_broadcast_mirror_view_now(cradle_broadcast_mirror *m, cradle_broadcast_mirror_view *out) {
    pthread_mutex_lock(&m->mutex);
    *out = m->view;
    pthread_mutex_unlock(&m->mutex);
}

uint32_t cradle_broadcast_mirror_keyframe(cradle_broadcast_mirror *m, uint32_t segment, void *out, size_t capacity) {
    pthread_mutex_lock(&m->mutex);
    uint32_t n = 0;
    if (segment == m->view.segment && m->view.keyed && m->key_state_size <= capacity) {
        memcpy(out, m->key_state, m->key_state_size);
        n = m->key_state_size;
    }
    pthread_mutex_unlock(&m->mutex);
    return n;
}

/* ---- segments ----------------------------------------------------------- */

/* A new log file for the follower's segment, with the start document as its
 * header; a keyed segment's keyframe state (m->state) is copied for the
 * player. False (noted): the follower is told the fetch failed, and the
 * segment is opened again before its first fragment. */
static bool open_segment(cradle_broadcast_mirror *m) {
    const cradle_broadcast_follow *f = &m->follow;
    if (m->fd >= 0) close(m->fd);
    char path[1024];
    snprintf(path, sizeof path, "%s/segment-%" PRIu32 ".log", m->config.dir, f->segment);
    m->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (m->fd < 0 || !cradle_os_write_all(m->fd, f->start, sizeof f->start)) {
        note(m, false, "cannot write the mirror %s: %s", path, strerror(errno));
        return false;
    }
    bool ok = true;
    pthread_mutex_lock(&m->mutex);
    if (f->from_keyframe) {
        uint8_t *copy = realloc(m->key_state, m->state_size);
        ok = copy != NULL;
        if (ok) {
            m->key_state = copy;
            memcpy(copy, m->state, m->state_size);
            m->key_state_size = m->state_size;
            m->view.start_step = f->key.step + 1u;
            snprintf(m->view.start_build, sizeof m->view.start_build, "%s", m->state_build);
        }
    }
    if (ok) {
        snprintf(m->view.log_path, sizeof m->view.log_path, "%s", path);
        m->view.bytes = sizeof f->start;
        m->view.end_step = 0;
        m->view.keyed = f->from_keyframe;
        m->view.segment = f->segment;
    }
    pthread_mutex_unlock(&m->mutex);
    if (!ok) {
        note(m, false, "out of memory for a keyframe");
        return false;
    }
    m->segment = f->segment;
    return true;
}

/* Fetches and writes the data files a fragment names, checked by hash. */
static bool take_data(cradle_broadcast_mirror *m, const cradle_broadcast_fragment_info *info) {
    char log_path[1024];
    pthread_mutex_lock(&m->mutex);
    memcpy(log_path, m->view.log_path, sizeof log_path);
    pthread_mutex_unlock(&m->mutex);
    for (uint32_t i = 0; i < info->data_count; i++) {
        char path[160], file[1200];
        int u = cradle_broadcast_url(path, sizeof path, "", CRADLE_BROADCAST_DATA, 0, info->data_hash[i]);
        assert(u == 0);
        (void)u;
        if (cradle_log_data_path(file, sizeof file, log_path, info->data_hash[i]) != 0) return false;
        size_t n = 0;
        if (get(m, path, m->doc, m->doc_capacity < CRADLE_GAME_DATA_MAX_BYTES + 1u ? m->doc_capacity
                                                                                     : CRADLE_GAME_DATA_MAX_BYTES + 1u,
                &n) != 0)
            return false;
        uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES];
        crypto_generichash(hash, sizeof hash, m->doc, n, NULL, 0);
        if (n != info->data_size[i] || sodium_memcmp(hash, info->data_hash[i], sizeof hash) != 0) {
            note(m, true, "%s: %zu bytes that are not the ones the log names (%" PRIu32 " bytes, its BLAKE2b-256)", path,
                 n, info->data_size[i]);
            return false;
        }
        char dir[1200];
        snprintf(dir, sizeof dir, "%s.data", log_path);
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
            note(m, false, "cannot create %s: %s", dir, strerror(errno));
            return false;
        }
        int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        bool ok = fd >= 0 && cradle_os_write_all(fd, m->doc, n);
        if (fd >= 0) close(fd);
        if (!ok) {
            note(m, false, "cannot write %s", file);
            return false;
        }
    }
    return true;
}

/* The verified fragment in buffer (m->unwritten bytes after the start): its
 * data files fetched, then appended to the segment's log. False (noted):
 * it stays in buffer, to be written after the next sync document. */
static bool write_fragment(cradle_broadcast_mirror *m) {
    const cradle_broadcast_fragment_info *info = &m->unwritten_info;
    if (!take_data(m, info)) return false;
    if (!cradle_os_write_all(m->fd, m->buffer + CRADLE_LOG_HEADER_BYTES, m->unwritten)) {
        note(m, false, "cannot append to the mirror: %s", strerror(errno));
        return false;
    }
    pthread_mutex_lock(&m->mutex);
    m->view.bytes += m->unwritten;
    m->view.end_step = info->end.step;
    m->view.fragments++;
    if (info->trailer) m->view.ended = true;
    m->view.error[0] = '\0';
    pthread_mutex_unlock(&m->mutex);
    m->unwritten = 0;
    return true;
}

/* ---- the documents the follower asks for -------------------------------- */

/* Each fetches one document into the mirror's buffers and hands it to the
 * follower (broadcast_follow.h). False: the fetch or the mirror's own part
 * failed (the follower is told); a refusal is the follower's and noted. */

static bool take_sync(cradle_broadcast_mirror *m, char *why, size_t why_size) {
    uint8_t text[CRADLE_BROADCAST_SYNC_MAX + 1];
    size_t n = 0;
    if (get(m, "sync", text, sizeof text, &n) != 0) return false;
    uint64_t syncs = m->follow.syncs;
    if (cradle_broadcast_follow_take_sync(&m->follow, text, n, why, why_size) != 0) {
        note(m, true, "%s", why);
        return true;
    }
    if (m->follow.syncs == syncs) return true; /* a cache's older copy, ignored */
    pthread_mutex_lock(&m->mutex);
    m->view.sync = m->follow.sync;
    m->view.have_sync = true;
    m->view.sync_at_unix_ms = cradle_wall_ns() / 1000000u;
    pthread_mutex_unlock(&m->mutex);
    return true;
}

static bool take_start(cradle_broadcast_mirror *m, char *why, size_t why_size) {
    size_t n = 0;
    if (get(m, "start", m->buffer, CRADLE_LOG_HEADER_BYTES + 1u, &n) != 0) return false;
    if (cradle_broadcast_follow_take_start(&m->follow, m->buffer, n, why, why_size) != 0) note(m, true, "%s", why);
    return true;
}

static bool take_keyframe(cradle_broadcast_mirror *m, const char *path, char *why, size_t why_size) {
    size_t n = 0;
    if (get(m, path, m->doc, m->doc_capacity, &n) != 0) return false;
    cradle_broadcast_keyframe k;
    if (cradle_broadcast_follow_take_keyframe(&m->follow, &m->codec, m->doc, n, m->state, m->config.state_capacity, &k,
                                              why, why_size) != 0) {
        note(m, true, "%s", why);
        return true;
    }
    m->state_size = k.state_size;
    memcpy(m->state_build, k.build_id, sizeof m->state_build);
    return open_segment(m);
}

static bool take_fragment(cradle_broadcast_mirror *m, const char *path, char *why, size_t why_size) {
    if (m->segment != m->follow.segment && !open_segment(m)) return false;
    size_t n = 0;
    memcpy(m->buffer, m->follow.start, CRADLE_LOG_HEADER_BYTES);
    if (get(m, path, m->buffer + CRADLE_LOG_HEADER_BYTES, CRADLE_BROADCAST_FRAGMENT_MAX + 1u, &n) != 0) return false;
    if (cradle_broadcast_follow_take_fragment(&m->follow, m->buffer, CRADLE_LOG_HEADER_BYTES + n, &m->unwritten_info,
                                              why, why_size) != 0) {
        note(m, true, "%s", why);
        return true;
    }
    m->unwritten = n;
    return write_fragment(m);
}

/* Fetches what ask wants and hands it to the follower. */
static void serve(cradle_broadcast_mirror *m, const cradle_broadcast_follow_ask *ask, uint64_t now) {
    char path[64], why[CRADLE_BROADCAST_MESSAGE_MAX];
    int u = cradle_broadcast_follow_url(path, sizeof path, "", ask);
    assert(u == 0);
    (void)u;
    bool ok = true;
    switch (ask->want) {
    case CRADLE_BROADCAST_FOLLOW_SYNC:
        cradle_broadcast_follow_polled(&m->follow, now);
        ok = take_sync(m, why, sizeof why);
        break;
    case CRADLE_BROADCAST_FOLLOW_START: ok = take_start(m, why, sizeof why); break;
    case CRADLE_BROADCAST_FOLLOW_KEYFRAME: ok = take_keyframe(m, path, why, sizeof why); break;
    case CRADLE_BROADCAST_FOLLOW_FRAGMENT: ok = take_fragment(m, path, why, sizeof why); break;
    default: break;
    }
    if (!ok) cradle_broadcast_follow_failed(&m->follow);
}

/* Sleeps until deadline (CLOCK_MONOTONIC ns; 0: until the mirror closes). */
static void sleep_until(cradle_broadcast_mirror *m, uint64_t deadline) {
    struct timespec until = {.tv_sec = (time_t)(deadline / 1000000000u), .tv_nsec = (long)(deadline % 1000000000u)};
    pthread_mutex_lock(&m->mutex);
    if (!atomic_load(&m->stop)) {
        if (deadline) (void)pthread_cond_timedwait(&m->cond, &m->mutex, &until);
        else (void)pthread_cond_wait(&m->cond, &m->mutex);
    }
    pthread_mutex_unlock(&m->mutex);
}

/* The fetch thread: what the follower asks for, until it is done. A
 * fragment verified but not yet written (its data files or the disk
 * failed) is written first once the follower goes on. */
static void *mirror_main(void *arg) {
    cradle_os_name_thread("mirror");
    cradle_broadcast_mirror *m = arg;
    cradle_broadcast_follow *f = &m->follow;
    while (!atomic_load(&m->stop)) {
        uint64_t now = cradle_mono_ns();
        cradle_broadcast_follow_ask ask;
        cradle_broadcast_follow_next(f, now, &ask);
        if (ask.note != CRADLE_BROADCAST_FOLLOW_NOTHING) note(m, true, "%s", ask.message);
        bool done = ask.want == CRADLE_BROADCAST_FOLLOW_DONE;
        if (ask.want == CRADLE_BROADCAST_FOLLOW_SYNC) {
            serve(m, &ask, now);
        } else if (m->unwritten && (!f->stalled || done)) {
            if (write_fragment(m)) continue;
            cradle_broadcast_follow_failed(f);
            if (done) sleep_until(m, now + f->poll_ns); /* no more polls: try again a period later */
        } else if (done) {
            sleep_until(m, 0);
        } else if (ask.want == CRADLE_BROADCAST_FOLLOW_WAIT) {
            sleep_until(m, f->next_poll);
        } else {
            serve(m, &ask, now);
        }
    }
    return NULL;
}

/* ---- open and close ----------------------------------------------------- */

int cradle_broadcast_mirror_open(cradle_broadcast_mirror **out, const cradle_broadcast_mirror_config *config,
                                 char *message, size_t message_size) {
    *out = NULL;
    cradle_broadcast_mirror *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(message, message_size, "out of memory");
        return CRADLE_ENOMEM;
    }
    m->config = *config;
    m->config.verify_key = NULL; /* the copy kept */
    if (config->verify_key) {
        m->pinned = true;
        memcpy(m->verify_key, config->verify_key, sizeof m->verify_key);
    }
    m->fd = -1;
    if (!m->config.poll_ms) m->config.poll_ms = CRADLE_BROADCAST_MIRROR_POLL_MS;
    if (!m->config.state_capacity) m->config.state_capacity = DEFAULT_STATE_CAPACITY;
    m->follow_config = (cradle_broadcast_follow_config){
        .from = m->config.from_start ? CRADLE_BROADCAST_FOLLOW_FIRST : CRADLE_BROADCAST_FOLLOW_DELAYED,
        .delay_ms = m->config.delay_ms,
        .poll_ms = m->config.poll_ms,
        .game = m->config.game,
        .verify_key = m->pinned ? m->verify_key : NULL};
    cradle_broadcast_follow_init(&m->follow, &m->follow_config, cradle_mono_ns());
    pthread_mutex_init(&m->mutex, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&m->cond, &attr);
    pthread_condattr_destroy(&attr);
    size_t n = strlen(config->url);
    int rc = 0;
    if (n + 2 > sizeof m->base) {
        snprintf(message, message_size, "the URL is too long");
        rc = CRADLE_ERANGE;
        goto fail;
    }
    snprintf(m->base, sizeof m->base, "%s%s", config->url, n && config->url[n - 1] == '/' ? "" : "/");
    m->buffer = malloc(CRADLE_LOG_HEADER_BYTES + CRADLE_BROADCAST_FRAGMENT_MAX + 1u);
    m->doc_capacity = cradle_broadcast_keyframe_bound(m->config.state_capacity);
    if (m->doc_capacity < CRADLE_GAME_DATA_MAX_BYTES + 1u) m->doc_capacity = CRADLE_GAME_DATA_MAX_BYTES + 1u;
    m->doc = malloc(m->doc_capacity);
    m->state = malloc(m->config.state_capacity);
    m->curl = curl_easy_init();
    if (!m->buffer || !m->doc || !m->state || !m->curl || cradle_state_pack_init(&m->codec, 0, CRADLE_STATE_PACK_BOTH) != 0) {
        snprintf(message, message_size, "out of memory for the mirror's buffers");
        rc = CRADLE_ENOMEM;
        goto fail;
    }
    curl_easy_setopt(m->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(m->curl, CURLOPT_CONNECTTIMEOUT_MS, (long)CONNECT_TIMEOUT_MS);
    curl_easy_setopt(m->curl, CURLOPT_TIMEOUT_MS, (long)REQUEST_TIMEOUT_MS);
    curl_easy_setopt(m->curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(m->curl, CURLOPT_XFERINFOFUNCTION, progress);
    curl_easy_setopt(m->curl, CURLOPT_XFERINFODATA, &m->stop);
    curl_easy_setopt(m->curl, CURLOPT_NOPROGRESS, 0L);
    if (pthread_create(&m->thread, NULL, mirror_main, m) != 0) {
        snprintf(message, message_size, "cannot start the mirror's thread");
        rc = CRADLE_ENOMEM;
        goto fail;
    }
    m->thread_started = true;
    *out = m;
    return 0;
fail:
    cradle_broadcast_mirror_close(m);
    return rc;
}

void cradle_broadcast_mirror_close(cradle_broadcast_mirror *m) {
    if (!m) return;
    if (m->thread_started) {
        atomic_store(&m->stop, true);
        pthread_mutex_lock(&m->mutex);
        pthread_cond_broadcast(&m->cond);
        pthread_mutex_unlock(&m->mutex);
        pthread_join(m->thread, NULL);
    }
    if (m->fd >= 0) close(m->fd);
    free(m->buffer);
    free(m->doc);
    free(m->state);
    free(m->key_state);
    cradle_state_pack_free(&m->codec);
    if (m->curl) curl_easy_cleanup(m->curl);
    pthread_cond_destroy(&m->cond);
    pthread_mutex_destroy(&m->mutex);
    free(m);
}
