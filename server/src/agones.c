#include "agones.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cradle/errors.h"
#include "cradle/json.h"
#include "cradle/os.h"

/* The watch stream's lines, read in every build (the fuzz harness has no libcurl). */
static const struct {
    const char *name;
    cradle_agones_state state;
} STATES[] = {{"Ready", CRADLE_AGONES_STATE_READY},
              {"Allocated", CRADLE_AGONES_STATE_ALLOCATED},
              {"Reserved", CRADLE_AGONES_STATE_RESERVED},
              {"Shutdown", CRADLE_AGONES_STATE_SHUTDOWN}};

const char *cradle_agones_state_name(cradle_agones_state state) {
    for (size_t i = 0; i < sizeof STATES / sizeof STATES[0]; i++)
        if (STATES[i].state == state) return STATES[i].name;
    return state == CRADLE_AGONES_STATE_UNKNOWN ? "unknown" : "other";
}

bool cradle_agones_parse_watch_line(const char *line, size_t length, cradle_agones_state *state) {
    cradle_json_load_error error;
    json_t *root = cradle_json_load(line, length, 0, &error);
    json_t *status = json_object_get(json_object_get(root, "result"), "status");
    const char *name = json_string_value(json_object_get(status, "state"));
    bool ok = name != NULL;
    if (ok) {
        *state = CRADLE_AGONES_STATE_OTHER;
        for (size_t i = 0; i < sizeof STATES / sizeof STATES[0]; i++)
            if (strcmp(name, STATES[i].name) == 0) *state = STATES[i].state;
    }
    json_decref(root);
    return ok;
}

#if CRADLE_AGONES
#include <curl/curl.h>

#include "cradle/parse.h"
#include "cradle/systime.h"

#define WATCH_LINE_MAX 65536u /* a GameServer object is a few KiB */

bool cradle_agones_available(void) { return true; }

/* Discards the sidecar's reply body. */
static size_t discard(char *data, size_t size, size_t count, void *user) {
    (void)data;
    (void)user;
    return size * count;
}

/* POST <base>/<what> with an empty JSON object. True on HTTP 200. */
static bool post(CURL *curl, const cradle_agones *a, const char *what) {
    char url[128];
    snprintf(url, sizeof url, "%s/%s", a->base_url, what);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    CURLcode rc = curl_easy_perform(curl);
    long status = 0;
    if (rc == CURLE_OK) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    return rc == CURLE_OK && status == 200;
}

/* PUT <base>/metadata/label {"key":key,"value":"<value>"}. True on HTTP 200.
 * The handle goes back to POSTing "{}" after. */
static bool put_label(CURL *curl, const cradle_agones *a, const char *key, uint32_t value) {
    char url[128], body[96];
    snprintf(url, sizeof url, "%s/metadata/label", a->base_url);
    snprintf(body, sizeof body, "{\"key\":\"%s\",\"value\":\"%u\"}", key, (unsigned)value);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
    CURLcode rc = curl_easy_perform(curl);
    long status = 0;
    if (rc == CURLE_OK) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, NULL);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "{}");
    return rc == CURLE_OK && status == 200;
}

/* Sends the labels the host asked for, if they changed. Mutex not held. */
static void send_labels(CURL *curl, cradle_agones *a) {
    pthread_mutex_lock(&a->mutex);
    bool wanted = a->labels_wanted;
    uint32_t players = a->players, spectators = a->spectators;
    a->labels_wanted = false;
    pthread_mutex_unlock(&a->mutex);
    if (!wanted) return;
    if (put_label(curl, a, "players", players) && put_label(curl, a, "spectators", spectators)) {
        atomic_fetch_add(&a->labels_ok, 1);
        return;
    }
    atomic_fetch_add(&a->failures, 1);
    pthread_mutex_lock(&a->mutex);
    a->labels_wanted = true; /* the next turn tries again */
    pthread_mutex_unlock(&a->mutex);
}

/* Waits on the condition until deadline_ms (monotonic). Mutex held. */
static void wait_until(cradle_agones *a, uint64_t deadline_ms) {
    struct timespec ts = {.tv_sec = (time_t)(deadline_ms / 1000u),
                          .tv_nsec = (long)(deadline_ms % 1000u) * 1000000L};
    (void)pthread_cond_timedwait(&a->cond, &a->mutex, &ts);
}

static void *agones_thread(void *arg) {
    cradle_os_name_thread("agones");
    cradle_agones *a = arg;
    CURL *curl = curl_easy_init();
    if (!curl) {
        atomic_fetch_add(&a->failures, 1);
        return NULL;
    }
    struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "{}");
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L); /* no SIGALRM in a threaded program */
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 500L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 1000L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(curl, CURLOPT_PROXY, ""); /* the sidecar is local: ignore http_proxy */

    const uint32_t backoff_min = 100, backoff_max = 2000;
    uint32_t backoff = backoff_min;
    bool ready_done = false;
    uint64_t next_health = cradle_mono_ms(), next_ready = 0, next_labels = 0, shutdown_deadline = 0;
    pthread_mutex_lock(&a->mutex);
    for (;;) {
        bool want_ready = a->ready_requested && !ready_done;
        bool want_shutdown = a->shutdown_requested;
        if (a->stop) break;
        uint64_t now = cradle_mono_ms();
        if (want_shutdown) {
            if (!shutdown_deadline) shutdown_deadline = now + a->shutdown_budget_ms;
            pthread_mutex_unlock(&a->mutex);
            bool ok = post(curl, a, "shutdown");
            pthread_mutex_lock(&a->mutex);
            if (ok) {
                atomic_fetch_add(&a->shutdown_ok, 1);
                break;
            }
            atomic_fetch_add(&a->failures, 1);
            if (cradle_mono_ms() + backoff >= shutdown_deadline) break; /* give up: the pod is going away */
            wait_until(a, cradle_mono_ms() + backoff);
            backoff = backoff * 2 > backoff_max ? backoff_max : backoff * 2;
            continue;
        }
        uint64_t next = next_health;
        if (want_ready && next_ready < next) next = next_ready;
        bool want_labels = a->labels_wanted && ready_done && now >= next_labels;
        if (now < next && !want_labels) {
            if (a->labels_wanted && ready_done && next_labels < next) next = next_labels;
            wait_until(a, next);
            continue;
        }
        pthread_mutex_unlock(&a->mutex);
        if (want_labels) {
            send_labels(curl, a);
            next_labels = cradle_mono_ms() + backoff_min; /* at most ten label updates a second */
        }
        if (want_ready && now >= next_ready) {
            if (post(curl, a, "ready")) {
                atomic_fetch_add(&a->ready_ok, 1);
                ready_done = true;
                backoff = backoff_min;
            } else {
                atomic_fetch_add(&a->failures, 1);
                next_ready = cradle_mono_ms() + backoff;
                backoff = backoff * 2 > backoff_max ? backoff_max : backoff * 2;
            }
        }
        uint64_t at = cradle_mono_ms();
        if (at >= next_health && a->alive && !a->alive(a->alive_context, at, a->health_interval_ms)) {
            atomic_fetch_add(&a->health_withheld, 1); /* no sign of life, no health */
            next_health = at + a->health_interval_ms;
        } else if (at >= next_health) {
            bool ok = post(curl, a, "health");
            atomic_fetch_add(ok ? &a->health_ok : &a->failures, 1);
            /* Until the sidecar answers, retry sooner than the period. */
            next_health = cradle_mono_ms() + (ok ? a->health_interval_ms : backoff_min * 5u);
        }
        pthread_mutex_lock(&a->mutex);
    }
    pthread_mutex_unlock(&a->mutex);
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    return NULL;
}

/* ---- the GameServer watch ---- */

typedef struct watch_stream {
    cradle_agones *a;
    char line[WATCH_LINE_MAX];
    size_t length;
    bool overlong; /* the line so far did not fit: skip it to its end */
} watch_stream;

/* One line of the stream (agones_parse_watch_line); a line that is none is counted. */
static void take_line(cradle_agones *a, const char *line, size_t length) {
    if (length == 0) return;
    cradle_agones_state seen;
    if (!cradle_agones_parse_watch_line(line, length, &seen)) {
        atomic_fetch_add(&a->watch_errors, 1);
        return;
    }
    atomic_store(&a->state, (int)seen);
    atomic_fetch_add(&a->watch_updates, 1);
}

static size_t on_watch_bytes(char *data, size_t size, size_t count, void *user) {
    watch_stream *w = user;
    size_t n = size * count;
    for (size_t i = 0; i < n; i++) {
        if (data[i] == '\n') {
            if (!w->overlong) take_line(w->a, w->line, w->length);
            else atomic_fetch_add(&w->a->watch_errors, 1);
            w->length = 0;
            w->overlong = false;
        } else if (w->length < sizeof w->line) {
            w->line[w->length++] = data[i];
        } else {
            w->overlong = true;
        }
    }
    return n;
}

/* libcurl asks about once a second, idle or not: a non-zero answer ends the stream. */
static int watch_progress(void *user, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un) {
    (void)dt, (void)dn, (void)ut, (void)un;
    return atomic_load(&((cradle_agones *)user)->watch_stop) ? 1 : 0;
}

static void *watch_thread(void *arg) {
    cradle_os_name_thread("agones-watch");
    cradle_agones *a = arg;
    static watch_stream stream;
    stream.a = a;
    CURL *curl = curl_easy_init();
    if (!curl) return NULL;
    char url[128];
    snprintf(url, sizeof url, "%s/watch/gameserver", a->base_url);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 500L);
    curl_easy_setopt(curl, CURLOPT_PROXY, "");
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_watch_bytes);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &stream);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, watch_progress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, a);
    uint32_t backoff = 100;
    while (!atomic_load(&a->watch_stop)) {
        stream.length = 0;
        stream.overlong = false;
        uint64_t updates = atomic_load(&a->watch_updates);
        (void)curl_easy_perform(curl); /* returns when the stream ends, fails or is stopped */
        if (atomic_load(&a->watch_updates) > updates) backoff = 100; /* it worked for a while */
        for (uint32_t waited = 0; waited < backoff && !atomic_load(&a->watch_stop); waited += 50) {
            struct timespec nap = {.tv_sec = 0, .tv_nsec = 50L * 1000000L};
            nanosleep(&nap, NULL);
        }
        backoff = backoff * 2 > 2000 ? 2000 : backoff * 2;
    }
    curl_easy_cleanup(curl);
    return NULL;
}

void cradle_agones_set_players(cradle_agones *a, uint32_t players, uint32_t spectators) {
    if (!a->started) return;
    pthread_mutex_lock(&a->mutex);
    if (players != a->players || spectators != a->spectators || !a->labels_sent_once) {
        a->players = players;
        a->spectators = spectators;
        a->labels_wanted = true;
        a->labels_sent_once = true;
        pthread_cond_signal(&a->cond);
    }
    pthread_mutex_unlock(&a->mutex);
}

int cradle_agones_start(cradle_agones *a, const cradle_agones_config *config) {
    memset(a, 0, sizeof *a);
    unsigned long port = config->port;
    if (!port) {
        const char *env = getenv("AGONES_SDK_HTTP_PORT");
        port = CRADLE_AGONES_DEFAULT_PORT;
        if (env && *env) {
            uint64_t value = 0;
            if (!cradle_parse_u64(env, 1, 65535, &value)) return CRADLE_ERANGE;
            port = (unsigned long)value;
        }
    }
    snprintf(a->base_url, sizeof a->base_url, "http://%s:%lu", config->host ? config->host : "localhost",
             port);
    a->health_interval_ms = config->health_interval_ms ? config->health_interval_ms : 2000u;
    a->shutdown_budget_ms = config->shutdown_budget_ms ? config->shutdown_budget_ms : 5000u;
    a->alive = config->alive;
    a->alive_context = config->alive_context;
    /* Thread-safe since libcurl 7.84 (Debian 12 has 7.88); called before the thread anyway. */
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return CRADLE_EIO;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&a->cond, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&a->mutex, NULL);
    if (pthread_create(&a->thread, NULL, agones_thread, a) != 0) {
        pthread_cond_destroy(&a->cond);
        pthread_mutex_destroy(&a->mutex);
        curl_global_cleanup();
        return CRADLE_EIO;
    }
    atomic_init(&a->watch_stop, false);
    atomic_init(&a->state, CRADLE_AGONES_STATE_UNKNOWN);
    a->watch_started = pthread_create(&a->watch_thread, NULL, watch_thread, a) == 0;
    a->started = true;
    return 0;
}

void cradle_agones_ready(cradle_agones *a) {
    if (!a->started) return;
    pthread_mutex_lock(&a->mutex);
    a->ready_requested = true;
    pthread_cond_signal(&a->cond);
    pthread_mutex_unlock(&a->mutex);
}

void cradle_agones_shutdown(cradle_agones *a) {
    if (!a->started) return;
    pthread_mutex_lock(&a->mutex);
    a->shutdown_requested = true;
    pthread_cond_signal(&a->cond);
    pthread_mutex_unlock(&a->mutex);
    pthread_join(a->thread, NULL);
    atomic_store(&a->watch_stop, true);
    if (a->watch_started) pthread_join(a->watch_thread, NULL); /* within a second: watch_progress */
    a->watch_started = false;
    pthread_cond_destroy(&a->cond);
    pthread_mutex_destroy(&a->mutex);
    curl_global_cleanup();
    a->started = false;
}

#else

bool cradle_agones_available(void) { return false; }

int cradle_agones_start(cradle_agones *a, const cradle_agones_config *config) {
    (void)config;
    memset(a, 0, sizeof *a);
    return CRADLE_EINVAL;
}

void cradle_agones_ready(cradle_agones *a) { (void)a; }

void cradle_agones_shutdown(cradle_agones *a) { (void)a; }

void cradle_agones_set_players(cradle_agones *a, uint32_t players, uint32_t spectators) {
    (void)a, (void)players, (void)spectators;
}

#endif
