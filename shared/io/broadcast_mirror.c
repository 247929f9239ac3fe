/*
 * broadcast_mirror: a viewer's copy of a broadcast as a session log (see
 * broadcast_mirror.h).
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
    CURL *curl;
    cradle_broadcast_codec codec;
    uint8_t *buffer;                   /* start + one fragment */
    uint8_t *doc;                      /* a keyframe or a data file */
    size_t doc_capacity;
    uint8_t *state;                    /* a keyframe's state, decoded */
    uint8_t start[CRADLE_LOG_HEADER_BYTES];
    bool have_start;
    cradle_log_header header;
    cradle_broadcast_sync sync;
    int fd;                            /* the segment's log, -1 when none */
    uint32_t segment;
    bool positioned;                   /* the segment knows its next fragment */
    uint64_t next_fragment;
    bool any_place;                    /* the next fragment may start anywhere (after a keyframe) */
    cradle_broadcast_position expect;
    uint64_t key_fragment_step;        /* keyed: the keyframe's step */
    uint64_t resume_after;             /* a gap ended at this fragment: start again past it */
    bool after_gap;
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

/* A new log file for a segment, with the start document as its header. */
static bool open_segment(cradle_broadcast_mirror *m) {
    if (m->fd >= 0) close(m->fd);
    m->segment++;
    char path[1024];
    snprintf(path, sizeof path, "%s/segment-%" PRIu32 ".log", m->config.dir, m->segment);
    m->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (m->fd < 0 || !cradle_os_write_all(m->fd, m->start, sizeof m->start)) {
        note(m, false, "cannot write the mirror %s: %s", path, strerror(errno));
        return false;
    }
    pthread_mutex_lock(&m->mutex);
    snprintf(m->view.log_path, sizeof m->view.log_path, "%s", path);
    m->view.bytes = sizeof m->start;
    m->view.end_step = 0;
    m->view.keyed = false;
    m->view.segment = m->segment;
    pthread_mutex_unlock(&m->mutex);
    return true;
}

/* The start document: the session log's header, checked like a log's. */
static bool take_start(cradle_broadcast_mirror *m) {
    size_t n = 0;
    if (get(m, "start", m->buffer, CRADLE_LOG_HEADER_BYTES + 1u, &n) != 0) return false;
    if (n != CRADLE_LOG_HEADER_BYTES) {
        note(m, true, "start: %zu bytes, a log header is %u", n, CRADLE_LOG_HEADER_BYTES);
        return false;
    }
    cradle_log_reader r;
    char why[CRADLE_LOG_MESSAGE_MAX];
    int rc = cradle_log_reader_open_memory(&r, m->buffer, n, why, sizeof why);
    if (rc != 0) {
        note(m, true, "start: %s", why);
        return false;
    }
    m->header = r.header;
    cradle_log_reader_close(&r);
    uint8_t session[CRADLE_BROADCAST_SESSION_BYTES];
    cradle_broadcast_session_of(m->buffer, session);
    if (memcmp(session, m->sync.session, sizeof session) != 0) {
        note(m, true, "start: of another session than the sync document's");
        return false;
    }
    if (m->config.game && strcmp(m->header.game_name, m->config.game) != 0) {
        note(m, true, "start: a broadcast of game '%s', not '%s'", m->header.game_name, m->config.game);
        return false;
    }
    memcpy(m->start, m->buffer, sizeof m->start);
    m->have_start = true;
    return true;
}

/* Positions a new segment: at fragment 0, or at the keyframe a viewer
 * starting now shows first (after fragment `after` when a gap forces it). */
static bool position(cradle_broadcast_mirror *m) {
    const cradle_broadcast_sync *s = &m->sync;
    const cradle_broadcast_keyframe_ref *pick = NULL;
    if (!m->config.from_start) {
        uint64_t rate = s->steps_per_second;
        uint64_t behind = (uint64_t)m->config.delay_ms * rate / 1000u;
        uint64_t first_shown = s->live_step > behind ? s->live_step - behind : 0;
        for (uint32_t i = 0; i < s->keyframe_count; i++) {
            const cradle_broadcast_keyframe_ref *k = &s->keyframes[i];
            if (m->after_gap && k->fragment <= m->resume_after) continue;
            if (!pick || k->step <= first_shown) pick = k;
        }
    }
    if (!pick && m->after_gap) return false; /* wait for a keyframe past the gap */
    if (!pick && cradle_broadcast_sync_in_gap(s, 0)) {
        note(m, true, "sync: the broadcast lost fragment 0 and has no keyframe to start from");
        return false;
    }
    if (pick) {
        char path[64];
        int u = cradle_broadcast_url(path, sizeof path, "", CRADLE_BROADCAST_KEYFRAME, pick->key, NULL);
        assert(u == 0);
        (void)u;
        size_t n = 0;
        if (get(m, path, m->doc, m->doc_capacity, &n) != 0) return false;
        cradle_broadcast_keyframe k;
        char why[CRADLE_BROADCAST_MESSAGE_MAX];
        if (cradle_broadcast_keyframe_decode(&m->codec, m->doc, n, m->sync.session, m->pinned ? m->verify_key : NULL, &k, m->state,
                                             m->config.state_capacity, why, sizeof why) != 0) {
            note(m, true, "keyframe %" PRIu64 ": %s", pick->key, why + strlen("keyframe: "));
            return false;
        }
        if (k.step != pick->step) {
            note(m, true, "keyframe %" PRIu64 ": holds step %" PRIu64 ", the sync document says %" PRIu64, pick->key,
                 k.step, pick->step);
            return false;
        }
        if (!open_segment(m)) return false;
        pthread_mutex_lock(&m->mutex);
        uint8_t *copy = realloc(m->key_state, k.state_size);
        if (copy) {
            m->key_state = copy;
            memcpy(copy, m->state, k.state_size);
            m->key_state_size = k.state_size;
            m->view.keyed = true;
            m->view.start_step = k.step + 1u;
            snprintf(m->view.start_build, sizeof m->view.start_build, "%s", k.build_id);
        }
        pthread_mutex_unlock(&m->mutex);
        if (!copy) {
            note(m, false, "out of memory for a keyframe");
            return false;
        }
        m->next_fragment = pick->fragment;
        m->any_place = true;
        m->key_fragment_step = k.step;
    } else {
        if (!open_segment(m)) return false;
        m->next_fragment = 0;
        m->any_place = false;
        m->expect = (cradle_broadcast_position){0, 0};
    }
    m->after_gap = false;
    m->positioned = true;
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

/* The next fragment: fetched, checked, its data files fetched, appended.
 * Returns 1 when one was appended, 0 when there is nothing to do now. */
static int take_fragment(cradle_broadcast_mirror *m) {
    const cradle_broadcast_sync *s = &m->sync;
    if (m->next_fragment >= s->fragments) return 0;
    if (cradle_broadcast_sync_in_gap(s, m->next_fragment)) {
        uint64_t last = m->next_fragment;
        for (uint32_t i = 0; i < s->gap_count; i++)
            if (m->next_fragment >= s->gaps[i].first && m->next_fragment <= s->gaps[i].last) last = s->gaps[i].last;
        note(m, true, "gap: fragments %" PRIu64 "..%" PRIu64 " were lost before they reached the origin; "
             "starting again at a keyframe after them", m->next_fragment, last);
        m->after_gap = true;
        m->resume_after = last;
        m->positioned = false;
        return 0;
    }
    char path[64];
    int u = cradle_broadcast_url(path, sizeof path, "", CRADLE_BROADCAST_FRAGMENT, m->next_fragment, NULL);
    assert(u == 0);
    (void)u;
    size_t n = 0;
    memcpy(m->buffer, m->start, CRADLE_LOG_HEADER_BYTES);
    if (get(m, path, m->buffer + CRADLE_LOG_HEADER_BYTES, CRADLE_BROADCAST_FRAGMENT_MAX + 1u, &n) != 0) return 0;
    cradle_broadcast_fragment_info info;
    char why[CRADLE_BROADCAST_MESSAGE_MAX];
    if (cradle_broadcast_fragment_check(m->buffer, CRADLE_LOG_HEADER_BYTES + n, m->any_place ? NULL : &m->expect,
                                        m->pinned ? m->verify_key : NULL,
                                        &info, why, sizeof why) != 0) {
        note(m, true, "fragment %" PRIu64 ": %s", m->next_fragment, why + strlen("fragment: "));
        return 0;
    }
    if (m->any_place && info.first.step > m->key_fragment_step + 1u) {
        note(m, true, "fragment %" PRIu64 ": starts at step %" PRIu64 ", after its keyframe's step %" PRIu64,
             m->next_fragment, info.first.step, m->key_fragment_step);
        return 0;
    }
    if (!take_data(m, &info)) return 0;
    if (!cradle_os_write_all(m->fd, m->buffer + CRADLE_LOG_HEADER_BYTES, n)) {
        note(m, false, "cannot append to the mirror: %s", strerror(errno));
        return 0;
    }
    m->any_place = false;
    m->expect = info.end;
    m->next_fragment++;
    pthread_mutex_lock(&m->mutex);
    m->view.bytes += n;
    m->view.end_step = info.end.step;
    m->view.fragments++;
    if (info.trailer) m->view.ended = true;
    m->view.error[0] = '\0';
    pthread_cond_broadcast(&m->cond);
    pthread_mutex_unlock(&m->mutex);
    return 1;
}

static bool take_sync(cradle_broadcast_mirror *m) {
    uint8_t text[CRADLE_BROADCAST_SYNC_MAX + 1];
    size_t n = 0;
    if (get(m, "sync", text, sizeof text, &n) != 0) return false;
    cradle_broadcast_sync s;
    char why[CRADLE_BROADCAST_MESSAGE_MAX];
    if (cradle_broadcast_sync_decode(text, n, &s, why, sizeof why) != 0) {
        note(m, true, "%s", why);
        return false;
    }
    if (m->have_start && memcmp(s.session, m->sync.session, sizeof s.session) != 0) {
        note(m, true, "sync: now names another session; this viewer keeps the one it follows");
        return false;
    }
    if (m->have_start && s.fragments < m->sync.fragments)
        return true; /* a cache served an older copy than one seen before: keep the newer */
    m->sync = s;
    pthread_mutex_lock(&m->mutex);
    m->view.sync = s;
    m->view.have_sync = true;
    m->view.sync_at_unix_ms = cradle_wall_ns() / 1000000u;
    pthread_mutex_unlock(&m->mutex);
    return true;
}

static void *mirror_main(void *arg) {
    cradle_os_name_thread("mirror");
    cradle_broadcast_mirror *m = arg;
    while (!atomic_load(&m->stop)) {
        bool ended;
        pthread_mutex_lock(&m->mutex);
        ended = m->view.ended;
        pthread_mutex_unlock(&m->mutex);
        if (!ended && take_sync(m)) {
            if (!m->have_start) (void)take_start(m);
            if (m->have_start && !m->positioned) (void)position(m);
            while (m->positioned && !atomic_load(&m->stop) && take_fragment(m) == 1) {
            }
        }
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += (long)m->config.poll_ms * 1000000L;
        while (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&m->mutex);
        if (!atomic_load(&m->stop)) (void)pthread_cond_timedwait(&m->cond, &m->mutex, &until);
        pthread_mutex_unlock(&m->mutex);
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
    if (!m->buffer || !m->doc || !m->state || !m->curl || cradle_broadcast_codec_init(&m->codec, 0) != 0) {
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
    if (m->curl) curl_easy_cleanup(m->curl);
    cradle_broadcast_codec_free(&m->codec);
    free(m->buffer);
    free(m->doc);
    free(m->state);
    free(m->key_state);
    pthread_cond_destroy(&m->cond);
    pthread_mutex_destroy(&m->mutex);
    free(m);
}
