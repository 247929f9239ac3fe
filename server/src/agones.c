#include "agones.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cradle/errors.h"

#if CRADLE_AGONES
#include <curl/curl.h>

#include "cradle/parse.h"
#include "cradle/systime.h"

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

/* Waits on the condition until deadline_ms (monotonic). Mutex held. */
static void wait_until(cradle_agones *a, uint64_t deadline_ms) {
    struct timespec ts = {.tv_sec = (time_t)(deadline_ms / 1000u),
                          .tv_nsec = (long)(deadline_ms % 1000u) * 1000000L};
    (void)pthread_cond_timedwait(&a->cond, &a->mutex, &ts);
}

static void *agones_thread(void *arg) {
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
    uint64_t next_health = cradle_mono_ms(), next_ready = 0, shutdown_deadline = 0;
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
        if (now < next) {
            wait_until(a, next);
            continue;
        }
        pthread_mutex_unlock(&a->mutex);
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

#endif
