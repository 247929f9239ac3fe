/* test_server_broadcast: cradle-server's broadcast uploader (server/src/
 * broadcast.c) against an HTTP origin in this process (a thread that takes
 * PUTs on loopback and keeps every file), fed by a real session log writer:
 * the browser viewer's files of each build the session runs. A build's
 * WebAssembly twin beside the game library with its own build id is
 * published with its sounds and manifest under web/<sha256>, byte for byte,
 * and listed in the sync document before any sync names the build; a
 * missing twin and one of another build are shown in status and listed
 * nowhere, then taken once the right one appears; a reload lists the next
 * build, a reload back to a listed one uploads nothing; an origin that
 * refuses web/ files costs the session nothing. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sodium.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "broadcast.h"
#include "cradle/broadcast.h"
#include "cradle/log.h"

/* ---- an origin: PUTs over HTTP/1.1 on loopback, kept in memory --------------- */

enum { ORIGIN_FILES = 256, ORIGIN_CLIENTS = 8, SYNC_VERSIONS = 512, REQUEST_MAX = 1u << 20 };

typedef struct stored {
    char path[256]; /* without the leading '/' */
    uint8_t *bytes;
    size_t size;
    uint32_t puts;
} stored;

typedef struct client {
    int fd;
    uint8_t *buffer;
    size_t used;
} client;

typedef struct origin {
    int listen_fd;
    uint16_t port;
    pthread_t thread;
    atomic_bool stop;
    bool refuse_web;                /* 404 to every PUT under web/ */
    pthread_mutex_t mutex;
    stored files[ORIGIN_FILES];
    uint32_t count;
    uint32_t web_puts, web_refused; /* PUTs under web/: taken, refused */
    char *syncs[SYNC_VERSIONS];     /* every sync document put, in order (NUL-terminated) */
    uint32_t sync_count;
    client clients[ORIGIN_CLIENTS];
} origin;

static void keep(origin *o, const char *path, const uint8_t *body, size_t size) {
    pthread_mutex_lock(&o->mutex);
    stored *f = NULL;
    for (uint32_t i = 0; i < o->count && !f; i++)
        if (strcmp(o->files[i].path, path) == 0) f = &o->files[i];
    if (!f) {
        assert_true(o->count < ORIGIN_FILES);
        f = &o->files[o->count++];
        assert_true(strlen(path) < sizeof f->path); /* a test's paths are short */
        memcpy(f->path, path, strlen(path) + 1);
    }
    free(f->bytes);
    f->bytes = malloc(size ? size : 1);
    assert_non_null(f->bytes);
    memcpy(f->bytes, body, size);
    f->size = size;
    f->puts++;
    if (strstr(path, "/web/")) o->web_puts++;
    size_t n = strlen(path);
    if (n >= 5 && strcmp(path + n - 5, "/sync") == 0 && o->sync_count < SYNC_VERSIONS) {
        char *text = malloc(size + 1);
        assert_non_null(text);
        memcpy(text, body, size);
        text[size] = '\0';
        o->syncs[o->sync_count++] = text;
    }
    pthread_mutex_unlock(&o->mutex);
}

static bool send_all(int fd, const char *text) {
    size_t n = strlen(text), at = 0;
    while (at < n) {
        ssize_t w = send(fd, text + at, n - at, MSG_NOSIGNAL);
        if (w <= 0) return false;
        at += (size_t)w;
    }
    return true;
}

/* Answers every whole request in c's buffer. False: close the connection. */
static bool serve_requests(origin *o, client *c) {
    for (;;) {
        c->buffer[c->used] = '\0';
        char *end = strstr((char *)c->buffer, "\r\n\r\n");
        if (!end) return c->used < REQUEST_MAX;
        size_t head = (size_t)(end - (char *)c->buffer) + 4u;
        char method[8], target[300];
        if (sscanf((char *)c->buffer, "%7s %299s HTTP/1.1", method, target) != 2 || strcmp(method, "PUT") != 0)
            return false;
        size_t length = 0;
        for (char *line = strstr((char *)c->buffer, "\r\n") + 2; line < end; line = strstr(line, "\r\n") + 2)
            if (strncasecmp(line, "Content-Length:", 15) == 0) length = strtoul(line + 15, NULL, 10);
        if (head + length > REQUEST_MAX) return false;
        if (c->used < head + length) return true; /* the body is still coming */
        bool web = strstr(target, "/web/") != NULL;
        if (web && o->refuse_web) {
            pthread_mutex_lock(&o->mutex);
            o->web_refused++;
            pthread_mutex_unlock(&o->mutex);
            if (!send_all(c->fd, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")) return false;
        } else {
            keep(o, target + 1, c->buffer + head, length);
            if (!send_all(c->fd, "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n")) return false;
        }
        memmove(c->buffer, c->buffer + head + length, c->used - head - length);
        c->used -= head + length;
    }
}

static void drop_client(client *c) {
    close(c->fd);
    free(c->buffer);
    *c = (client){.fd = -1};
}

static void *origin_main(void *arg) {
    origin *o = arg;
    while (!atomic_load(&o->stop)) {
        struct pollfd fds[1 + ORIGIN_CLIENTS];
        fds[0] = (struct pollfd){.fd = o->listen_fd, .events = POLLIN};
        for (int i = 0; i < ORIGIN_CLIENTS; i++) fds[1 + i] = (struct pollfd){.fd = o->clients[i].fd, .events = POLLIN};
        if (poll(fds, 1 + ORIGIN_CLIENTS, 20) <= 0) continue;
        if (fds[0].revents & POLLIN) {
            int fd = accept(o->listen_fd, NULL, NULL);
            for (int i = 0; fd >= 0 && i < ORIGIN_CLIENTS; i++) {
                if (o->clients[i].fd >= 0) continue;
                o->clients[i] = (client){.fd = fd, .buffer = malloc(REQUEST_MAX + 1)};
                assert_non_null(o->clients[i].buffer);
                fd = -1;
            }
            if (fd >= 0) close(fd);
        }
        for (int i = 0; i < ORIGIN_CLIENTS; i++) {
            client *c = &o->clients[i];
            if (c->fd < 0 || !(fds[1 + i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t r = recv(c->fd, c->buffer + c->used, REQUEST_MAX - c->used, 0);
            if (r <= 0) {
                drop_client(c);
                continue;
            }
            c->used += (size_t)r;
            if (!serve_requests(o, c)) drop_client(c);
        }
    }
    return NULL;
}

static void origin_start(origin *o, bool refuse_web) {
    memset(o, 0, sizeof *o);
    o->refuse_web = refuse_web;
    for (int i = 0; i < ORIGIN_CLIENTS; i++) o->clients[i].fd = -1;
    pthread_mutex_init(&o->mutex, NULL);
    o->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(o->listen_fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(o->listen_fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(o->listen_fd, 16), 0);
    socklen_t len = sizeof a;
    assert_int_equal(getsockname(o->listen_fd, (struct sockaddr *)&a, &len), 0);
    o->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&o->thread, NULL, origin_main, o), 0);
}

static void origin_stop(origin *o) {
    atomic_store(&o->stop, true);
    pthread_join(o->thread, NULL);
    for (int i = 0; i < ORIGIN_CLIENTS; i++)
        if (o->clients[i].fd >= 0) drop_client(&o->clients[i]);
    close(o->listen_fd);
    for (uint32_t i = 0; i < o->count; i++) free(o->files[i].bytes);
    for (uint32_t i = 0; i < o->sync_count; i++) free(o->syncs[i]);
    pthread_mutex_destroy(&o->mutex);
}

/* A copy of the file at path (the caller frees it), or NULL. */
static uint8_t *origin_get(origin *o, const char *path, size_t *size) {
    uint8_t *copy = NULL;
    pthread_mutex_lock(&o->mutex);
    for (uint32_t i = 0; i < o->count; i++) {
        if (strcmp(o->files[i].path, path) != 0) continue;
        copy = malloc(o->files[i].size + 1);
        assert_non_null(copy);
        memcpy(copy, o->files[i].bytes, o->files[i].size);
        copy[o->files[i].size] = '\0';
        *size = o->files[i].size;
    }
    pthread_mutex_unlock(&o->mutex);
    return copy;
}

static uint32_t origin_web_puts(origin *o) {
    pthread_mutex_lock(&o->mutex);
    uint32_t n = o->web_puts;
    pthread_mutex_unlock(&o->mutex);
    return n;
}

/* The newest sync document, decoded; false when there is none yet. */
static bool newest_sync(origin *o, cradle_broadcast_sync *s) {
    size_t size;
    uint8_t *text = origin_get(o, "live/t/sync", &size);
    if (!text) return false;
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    int rc = cradle_broadcast_sync_decode(text, size, s, message, sizeof message);
    if (rc != 0) fail_msg("%s: %s", message, (char *)text);
    free(text);
    return true;
}

/* ---- the game's files, the broadcast, the session ------------------------------ */

static char dir[128], library[256];
static const char *const sounds[2] = {"sounds/a.wav", "sounds/b.wav"}; /* b.wav is never there */
static const uint8_t a_wav[] = "RIFF....WAVEfmt not really a WAV: the server does not read inside";

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/cradle-test-server-broadcast-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(library, sizeof library, "%s/game.so", dir);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *name, const void *bytes, size_t size) {
    char path[300], temp[320];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(temp, sizeof temp, "%s.new", path);
    FILE *f = fopen(temp, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(rename(temp, path), 0); /* a new file, as a build writes one: the server sees it changed */
}

/* A build's twin, as the SDK makes it: a module whose custom section
 * "cradle_build" holds the id, between a type section and a name section. */
static size_t twin_of(const char *build, uint8_t *out) {
    size_t n = 0, id = strlen(build);
    memcpy(out, "\0asm\1\0\0\0", 8);
    n = 8;
    static const uint8_t types[] = {0x01, 0x04, 0x01, 0x60, 0x00, 0x00};
    memcpy(out + n, types, sizeof types);
    n += sizeof types;
    out[n++] = 0x00;
    out[n++] = (uint8_t)(1u + 12u + id);
    out[n++] = 12;
    memcpy(out + n, "cradle_build", 12);
    n += 12;
    memcpy(out + n, build, id);
    n += id;
    static const uint8_t name[] = {0x00, 0x05, 0x04, 'n', 'a', 'm', 'e'};
    memcpy(out + n, name, sizeof name);
    return n + sizeof name;
}

static void write_twin(const char *build) {
    uint8_t module[128];
    write_file("game.wasm", module, twin_of(build, module));
}

static cradle_server_broadcast *start_broadcast(const origin *o, const char *build) {
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/live/t", (unsigned)o->port);
    char log_path[300];
    snprintf(log_path, sizeof log_path, "%s/session.log", dir);
    cradle_server_broadcast_config config = {.url = url,
                                             .log_path = log_path,
                                             .game = "testgame",
                                             .build = build,
                                             .library = library,
                                             .sounds = sounds,
                                             .sound_count = 2,
                                             .steps_per_second = 60,
                                             .fragment_ms = 100,
                                             .state_capacity = 64,
                                             .block_max = CRADLE_LOG_BLOCK_MIN};
    cradle_server_broadcast *b = NULL;
    char message[256];
    if (cradle_server_broadcast_start(&b, &config, message, sizeof message) != 0) fail_msg("%s", message);
    return b;
}

enum { PLAYERS = 2, INPUT = 2, SNAP = 1 + PLAYERS * INPUT };

static size_t no_output(const void *s, uint64_t step, uint8_t *o, size_t c) {
    (void)s;
    (void)step;
    (void)o;
    (void)c;
    return 0;
}

/* Opens a session log whose writes go to the broadcast (its header: the
 * start document), as the server's host does. */
static void open_session(cradle_log_writer *w, cradle_server_broadcast *b, const char *build) {
    cradle_game_contract c = {.abi_major = 1, .state_size = 40, .state_align = 8, .input_bytes = INPUT,
                              .max_players = PLAYERS, .steps_per_second = 60, .source_frames_per_second = 20,
                              .name = "testgame", .build_id = build, .output = no_output};
    cradle_log_header h;
    assert_int_equal(cradle_log_header_from_contract(&h, &c, 7, PLAYERS, 1700000000000000000ull, 10), 0);
    char path[300], message[256];
    snprintf(path, sizeof path, "%s/session.log", dir);
    cradle_log_writer_config config = {.block_size = CRADLE_LOG_BLOCK_MIN, .sync_inline = true, .overwrite = true,
                                       .on_written = cradle_server_broadcast_written, .on_written_context = b};
    if (cradle_log_writer_open(w, path, &h, &config, NULL, message, sizeof message) != 0) fail_msg("%s", message);
}

/* Steps first..first+count-1, a hash every 10: whole blocks go to the broadcast. */
static void run_steps(cradle_log_writer *w, uint64_t first, uint64_t count) {
    uint8_t snap[SNAP];
    for (uint64_t s = first; s < first + count; s++) {
        for (unsigned i = 0; i < SNAP; i++) snap[i] = (uint8_t)(s * 7u + i);
        assert_int_equal(cradle_log_writer_append_step(w, s, snap), 0);
        if ((s + 1u) % 10u == 0) assert_int_equal(cradle_log_writer_append_hash(w, s, s * 3u + 1u), 0);
    }
}

/* The log's trailer, then the broadcast's last uploads. */
static void end_session(cradle_log_writer *w, cradle_server_broadcast *b) {
    assert_int_equal(cradle_log_writer_close(w, 99), 0);
    assert_true(cradle_server_broadcast_finish(b, 10000));
}

static void sleep_ms(unsigned ms) {
    struct timespec t = {.tv_sec = ms / 1000u, .tv_nsec = (long)(ms % 1000u) * 1000000L};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {
    }
}

/* Waits up to 15 s for status's broadcast_web to start with prefix. */
static void wait_web(cradle_server_broadcast *b, const char *prefix, cradle_server_broadcast_stats *st) {
    for (int i = 0; i < 1500; i++) {
        cradle_server_broadcast_get_stats(b, st);
        if (strncmp(st->web, prefix, strlen(prefix)) == 0) return;
        sleep_ms(10);
    }
    fail_msg("broadcast_web is \"%s\", waited for \"%s...\" (last error: %s)", st->web, prefix, st->last_error);
}

/* Waits up to 15 s for a sync document listing `count` web builds. */
static void wait_sync_web(origin *o, uint32_t count, cradle_broadcast_sync *s) {
    for (int i = 0; i < 1500; i++) {
        if (newest_sync(o, s) && s->web_count == count) return;
        sleep_ms(10);
    }
    fail_msg("no sync document lists %u web builds", (unsigned)count);
}

static void sha256_hex(const uint8_t *bytes, size_t n, uint8_t hash[32], char hex[65]) {
    crypto_hash_sha256(hash, bytes, n);
    sodium_bin2hex(hex, 65, hash, 32);
}

/* The origin's web/<hex of hash> holds exactly these bytes. */
static void web_file_is(origin *o, const uint8_t hash[32], const void *want, size_t want_size) {
    char hex[65], path[128];
    sodium_bin2hex(hex, sizeof hex, hash, 32);
    snprintf(path, sizeof path, "live/t/web/%s", hex);
    size_t size;
    uint8_t *got = origin_get(o, path, &size);
    if (!got) fail_msg("%s was not uploaded", path);
    assert_int_equal(size, want_size);
    assert_memory_equal(got, want, size);
    free(got);
}

/* What the manifest of build's twin (with a.wav there and b.wav missing)
 * must be, and its hash. */
static size_t expected_manifest(const char *build, const char *const *names, uint32_t count, char *out, size_t size,
                                uint8_t hash[32]) {
    uint8_t module[128], sum[32];
    char hex[65];
    size_t n = twin_of(build, module);
    cradle_broadcast_web_manifest m = {.game = "testgame", .build = build, .sound_count = count,
                                       .sound_names = names};
    m.wasm = (cradle_broadcast_web_file){.present = true, .bytes = (uint32_t)n};
    sha256_hex(module, n, m.wasm.sha256, hex);
    cradle_broadcast_web_file files[2] = {{.present = true, .bytes = sizeof a_wav}, {.present = false}};
    sha256_hex(a_wav, sizeof a_wav, files[0].sha256, hex);
    m.sounds = files;
    size_t length = cradle_broadcast_web_manifest_encode(&m, out, size);
    assert_true(length > 0);
    sha256_hex((const uint8_t *)out, length, sum, hex);
    memcpy(hash, sum, 32);
    return length;
}

/* Every sync document the origin got that names `build` as in charge lists
 * it in "web" (its web files went up before the sync named it). */
static void every_sync_naming_lists(origin *o, const char *build) {
    pthread_mutex_lock(&o->mutex);
    uint32_t named = 0;
    for (uint32_t i = 0; i < o->sync_count; i++) {
        cradle_broadcast_sync s;
        char message[CRADLE_BROADCAST_MESSAGE_MAX];
        assert_int_equal(cradle_broadcast_sync_decode(o->syncs[i], strlen(o->syncs[i]), &s, message, sizeof message), 0);
        if (strcmp(s.build, build) != 0) continue;
        named++;
        bool listed = false;
        for (uint32_t k = 0; k < s.web_count; k++) listed = listed || strcmp(s.web[k].build, build) == 0;
        if (!listed) fail_msg("sync %u names build %s and lists no manifest for it: %s", (unsigned)i, build, o->syncs[i]);
    }
    pthread_mutex_unlock(&o->mutex);
    assert_true(named > 0);
}

/* ---- the tests ------------------------------------------------------------------ */

static void test_web_files_of_each_build(void **state) {
    (void)state;
    origin o;
    origin_start(&o, false);
    write_file("game.so", "not opened by the broadcast", 27);
    char folder[300];
    snprintf(folder, sizeof folder, "%s/sounds", dir);
    assert_int_equal(mkdir(folder, 0700), 0);
    write_file("sounds/a.wav", a_wav, sizeof a_wav);
    write_twin("build-1");
    cradle_server_broadcast *b = start_broadcast(&o, "build-1");
    cradle_log_writer w;
    open_session(&w, b, "build-1");

    /* The twin, a.wav and the manifest go up; b.wav is listed missing. */
    cradle_server_broadcast_stats st;
    wait_web(b, "ok", &st);
    assert_string_equal(st.web, "ok (1 of 2 sound files missing)");
    cradle_broadcast_sync s;
    wait_sync_web(&o, 1, &s);
    assert_string_equal(s.build, "build-1");
    assert_string_equal(s.web[0].build, "build-1");
    char manifest[1024];
    uint8_t manifest_hash[32];
    size_t manifest_size = expected_manifest("build-1", sounds, 2, manifest, sizeof manifest, manifest_hash);
    assert_memory_equal(s.web[0].manifest, manifest_hash, 32);
    web_file_is(&o, manifest_hash, manifest, manifest_size);
    assert_non_null(strstr(manifest, "{\"name\":\"sounds/b.wav\",\"sha256\":null,\"bytes\":0}"));
    uint8_t module[128], hash[32];
    char hex[65];
    size_t module_size = twin_of("build-1", module);
    sha256_hex(module, module_size, hash, hex);
    web_file_is(&o, hash, module, module_size);
    sha256_hex(a_wav, sizeof a_wav, hash, hex);
    web_file_is(&o, hash, a_wav, sizeof a_wav);
    assert_int_equal(origin_web_puts(&o), 3);

    /* A reload: the next build's twin (one sound now) is listed after the first. */
    write_twin("build-2");
    cradle_server_broadcast_build(b, "build-2", library, sounds, 1);
    wait_sync_web(&o, 2, &s);
    wait_web(b, "ok", &st);
    assert_string_equal(st.web, "ok");
    assert_string_equal(s.web[0].build, "build-1");
    assert_string_equal(s.web[1].build, "build-2");
    manifest_size = expected_manifest("build-2", sounds, 1, manifest, sizeof manifest, manifest_hash);
    assert_memory_equal(s.web[1].manifest, manifest_hash, 32);
    web_file_is(&o, manifest_hash, manifest, manifest_size);
    module_size = twin_of("build-2", module);
    sha256_hex(module, module_size, hash, hex);
    web_file_is(&o, hash, module, module_size);
    assert_int_equal(origin_web_puts(&o), 6);

    /* Back to build-1 (its twin there again): listed already, nothing goes up. */
    write_twin("build-1");
    cradle_server_broadcast_build(b, "build-1", library, sounds, 2);
    run_steps(&w, 0, 200);
    for (int i = 0; i < 1500 && !(newest_sync(&o, &s) && strcmp(s.build, "build-1") == 0); i++) sleep_ms(10);
    assert_string_equal(s.build, "build-1");
    end_session(&w, b);
    assert_true(newest_sync(&o, &s));
    assert_true(s.ended);
    assert_string_equal(s.build, "build-1");
    assert_int_equal(s.web_count, 2);
    assert_int_equal(origin_web_puts(&o), 6);
    cradle_server_broadcast_get_stats(b, &st);
    assert_string_equal(st.web, "ok");
    every_sync_naming_lists(&o, "build-1");
    every_sync_naming_lists(&o, "build-2");
    cradle_server_broadcast_stop(b);
    origin_stop(&o);
}

static void test_web_missing_then_another_build_then_the_right_one(void **state) {
    (void)state;
    origin o;
    origin_start(&o, false);
    char twin[300];
    snprintf(twin, sizeof twin, "%s/game.wasm", dir);
    unlink(twin);
    cradle_server_broadcast *b = start_broadcast(&o, "build-7");
    cradle_log_writer w;
    open_session(&w, b, "build-7");

    /* No twin: status names the file; the sync documents list nothing. */
    cradle_server_broadcast_stats st;
    char want[400];
    snprintf(want, sizeof want, "none: %s missing", twin);
    wait_web(b, "none:", &st);
    assert_string_equal(st.web, want);
    run_steps(&w, 0, 100);
    cradle_broadcast_sync s;
    for (int i = 0; i < 1500 && !(newest_sync(&o, &s) && s.fragments > 0); i++) sleep_ms(10);
    assert_true(s.fragments > 0);
    assert_int_equal(s.web_count, 0);

    /* The twin of another build (not rebuilt yet): refused, naming both. */
    write_twin("build-6");
    snprintf(want, sizeof want, "refused: %s is the twin of build \"build-6\", not of \"build-7\", the build in charge",
             twin);
    wait_web(b, "refused:", &st);
    assert_string_equal(st.web, want);
    run_steps(&w, 100, 100);
    uint64_t fragments = s.fragments;
    for (int i = 0; i < 1500 && !(newest_sync(&o, &s) && s.fragments > fragments); i++) sleep_ms(10);
    assert_true(s.fragments > fragments); /* the session's fragments went on */
    assert_int_equal(s.web_count, 0);
    assert_int_equal(origin_web_puts(&o), 0);

    /* Damaged: refused with the byte at fault. */
    static const uint8_t damaged[] = {0, 'a', 's', 'm', 1, 0, 0, 0, 42, 0};
    write_file("game.wasm", damaged, sizeof damaged);
    snprintf(want, sizeof want,
             "refused: %s is no WebAssembly module: byte 8: section id 42 is not a WebAssembly section", twin);
    wait_web(b, "refused: /", &st);
    for (int i = 0; i < 1500 && strcmp(st.web, want) != 0; i++) {
        sleep_ms(10);
        cradle_server_broadcast_get_stats(b, &st);
    }
    assert_string_equal(st.web, want);

    /* The rebuild lands: taken when its file changes, and listed. */
    write_twin("build-7");
    wait_web(b, "ok", &st);
    wait_sync_web(&o, 1, &s);
    assert_string_equal(s.web[0].build, "build-7");
    end_session(&w, b);
    assert_true(newest_sync(&o, &s));
    assert_true(s.ended);
    assert_int_equal(s.web_count, 1);
    cradle_server_broadcast_stop(b);
    origin_stop(&o);
}

static void test_web_refused_by_the_origin(void **state) {
    (void)state;
    origin o;
    origin_start(&o, true);
    write_twin("build-3");
    cradle_server_broadcast *b = start_broadcast(&o, "build-3");
    cradle_log_writer w;
    open_session(&w, b, "build-3");
    cradle_server_broadcast_stats st;
    wait_web(b, "refused:", &st);
    uint8_t module[128], hash[32];
    char hex[65], want[300];
    sha256_hex(module, twin_of("build-3", module), hash, hex);
    snprintf(want, sizeof want, "refused: the origin answers HTTP 404 to PUT web/%s (does it take web/ files?)", hex);
    assert_string_equal(st.web, want);
    /* nothing waits on it: the session goes up whole */
    run_steps(&w, 0, 200);
    end_session(&w, b);
    cradle_broadcast_sync s;
    assert_true(newest_sync(&o, &s));
    assert_true(s.ended);
    assert_int_equal(s.web_count, 0);
    cradle_server_broadcast_get_stats(b, &st);
    assert_int_equal(st.lost, 0);
    pthread_mutex_lock(&o.mutex);
    assert_int_equal(o.web_refused, 1); /* tried once, then not for a minute */
    pthread_mutex_unlock(&o.mutex);
    cradle_server_broadcast_stop(b);
    origin_stop(&o);
}

/* No library path: no web files, status says so, the sync lists none. */
static void test_web_off_without_a_library(void **state) {
    (void)state;
    origin o;
    origin_start(&o, false);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/live/t", (unsigned)o.port);
    cradle_server_broadcast_config config = {.url = url, .game = "testgame", .build = "build-1",
                                             .steps_per_second = 60, .fragment_ms = 100, .state_capacity = 64,
                                             .block_max = CRADLE_LOG_BLOCK_MIN};
    cradle_server_broadcast *b = NULL;
    char message[256];
    assert_int_equal(cradle_server_broadcast_start(&b, &config, message, sizeof message), 0);
    cradle_server_broadcast_stats st;
    cradle_server_broadcast_get_stats(b, &st);
    assert_string_equal(st.web, "off");
    cradle_log_writer w;
    open_session(&w, b, "build-1");
    run_steps(&w, 0, 100);
    end_session(&w, b);
    cradle_broadcast_sync s;
    assert_true(newest_sync(&o, &s));
    assert_int_equal(s.web_count, 0);
    assert_int_equal(origin_web_puts(&o), 0);
    cradle_server_broadcast_get_stats(b, &st);
    assert_string_equal(st.web, "off");
    cradle_server_broadcast_stop(b);
    origin_stop(&o);
}

int main(void) {
    if (sodium_init() < 0 || curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_web_files_of_each_build),
        cmocka_unit_test(test_web_missing_then_another_build_then_the_right_one),
        cmocka_unit_test(test_web_refused_by_the_origin),
        cmocka_unit_test(test_web_off_without_a_library),
    };
    int failed = cmocka_run_group_tests(tests, setup, teardown);
    curl_global_cleanup();
    return failed;
}
