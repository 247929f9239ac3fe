/*
 * cradle-server: hosts one session of one game over ENet.
 *
 * main wires the parts: options (options.c), the network thread (net.c) and
 * the game thread, which is this thread (host.c). Exit status: 0 after a
 * quit or SIGINT/SIGTERM, 2 for a usage error, 1 for anything else.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <sodium.h>
#include <enet/enet.h>

#include "cradle/contract.h"
#include "cradle/dev.h"
#include "cradle/errors.h"
#include "cradle/keys.h"
#include "cradle/token.h"

#include "agones.h"
#include "broadcast.h"
#include "host.h"
#include "resume.h"
#include "watchdog.h"
#include "net.h"
#include "options.h"

/* Lock-free, so the handler may store it and every thread read it. */
static _Atomic int signalled;
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "a signal handler may store an atomic int");

/* The server's key pair and the issuers it trusts (secure mode). */
typedef struct security {
    bool secure;
    cradle_keys keys;
    uint8_t issuers[CRADLE_TOKEN_ISSUERS_MAX][CRADLE_TOKEN_KEY_BYTES];
    uint32_t issuer_count;
    char server_id[CRADLE_KEYS_HEX_SIZE];
    bool created_key; /* this start created the key file: say so (report_security) */
} security;

static bool loopback_address(const char *text) {
    struct in_addr a;
    return text[0] != '\0' && inet_pton(AF_INET, text, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127u;
}

static bool add_issuer(security *sec, const char *hex, const char *where) {
    if (sec->issuer_count >= CRADLE_TOKEN_ISSUERS_MAX) {
        fprintf(stderr, "cradle-server: %s: at most %u trusted issuers\n", where, CRADLE_TOKEN_ISSUERS_MAX);
        return false;
    }
    if (cradle_keys_from_hex(sec->issuers[sec->issuer_count], hex) != 0) {
        fprintf(stderr, "cradle-server: %s: '%s' is not 64 hex digits (an issuer public key)\n", where, hex);
        return false;
    }
    sec->issuer_count++;
    return true;
}

/* Trusted keys from FILE: one hex key a line; blank lines and '#' comments skipped. */
static bool read_trust_file(security *sec, const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cradle-server: --trust-file: cannot open '%s': %s\n", path, strerror(errno));
        return false;
    }
    char line[256];
    bool ok = true;
    while (ok && fgets(line, sizeof line, f)) {
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        size_t n = strcspn(p, " \t\r\n#");
        if (n == 0) continue;
        p[n] = '\0';
        ok = add_issuer(sec, p, "--trust-file");
    }
    fclose(f);
    return ok;
}

/* Applies the security options. Returns 0, or the exit status after
 * printing what is wrong and how to fix it. */
static int setup_security(const cradle_server_options *o, security *sec) {
    memset(sec, 0, sizeof *sec);
    if (o->insecure) {
        if (!loopback_address(o->bind)) {
            fprintf(stderr, "cradle-server: --insecure (plaintext, no join tokens) is refused on %s: it is "
                            "for local development on a loopback address only (--bind 127.0.0.1)\n",
                    o->bind[0] ? o->bind : "all addresses (no --bind)");
            return 2;
        }
        if (o->key[0] || o->trust_count || o->trust_file[0]) {
            fprintf(stderr, "cradle-server: --insecure cannot be combined with --key, --trust or --trust-file\n");
            return 2;
        }
        return 0;
    }
    if (!o->key[0] || (o->trust_count == 0 && !o->trust_file[0])) {
        fprintf(stderr,
                "cradle-server: the server is secure by default and needs --key FILE (its key file, "
                "created on first run) and at least one trusted token issuer (--trust HEX or "
                "--trust-file FILE). Make an issuer key with 'cradle-keys gen --out issuer.key' and "
                "trust its public key 'cradle-keys pub issuer.key --sign'; issue player tokens with "
                "'cradle-keys token'. For local development only: --insecure --bind 127.0.0.1\n");
        return 2;
    }
    for (uint32_t i = 0; i < o->trust_count; i++)
        if (!add_issuer(sec, o->trust[i], "--trust")) return 2;
    if (o->trust_file[0] && !read_trust_file(sec, o->trust_file)) return 2;
    if (sec->issuer_count == 0) {
        fprintf(stderr, "cradle-server: --trust-file '%s' holds no key\n", o->trust_file);
        return 2;
    }
    char message[512];
    int rc = cradle_keys_load(&sec->keys, o->key, message, sizeof message);
    if (rc == CRADLE_EIO && access(o->key, F_OK) != 0 && errno == ENOENT) {
        rc = cradle_keys_generate(&sec->keys);
        if (rc == 0) rc = cradle_keys_save(&sec->keys, o->key, message, sizeof message);
        if (rc != 0) {
            fprintf(stderr, "cradle-server: --key: cannot create '%s': %s\n", o->key,
                    rc == CRADLE_EIO && message[0] ? message : cradle_strerror(rc));
            cradle_keys_wipe(&sec->keys);
            return 1;
        }
        sec->created_key = true;
    } else if (rc != 0) {
        fprintf(stderr, "cradle-server: --key: %s\n", message[0] ? message : cradle_strerror(rc));
        return 2;
    }
    cradle_keys_to_hex(sec->server_id, sec->keys.kx_public);
    sec->secure = true;
    return 0;
}

/* What setup_security decided that an operator must see, in the server's
 * log format (--log-format): the insecure mode, a key file created now. */
static void report_security(cradle_server_host *host, const cradle_server_options *o,
                            const security *sec) {
    if (o->insecure)
        cradle_server_say(host, "warning", "insecure",
                          "--insecure: plaintext and no join tokens (local development only)");
    if (sec->created_key)
        cradle_server_say(host, "info", "key_created", "created the server key file %s (0600); server id: %s",
                          o->key, sec->server_id);
}

static void on_signal(int signo) { signalled = signo; }

static void install_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN); /* a vanished dev client must not kill the server */
    /* Blocked here, before any thread starts, so in every thread: the
     * watchdog takes them (watchdog.h). */
    sigset_t stops;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stops, NULL);
}

/* Without the watchdog the game thread takes the signals itself, as its
 * handler's flag (the loop's ppoll wakes on them). */
static void unblock_signals(void) {
    sigset_t stops;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    pthread_sigmask(SIG_UNBLOCK, &stops, NULL);
}

/* Checks that need no resources: Agones support, --resume's old log. Returns
 * 0 or the exit status. */
static int check_options(cradle_server_options *options) {
    if (options->agones && !cradle_agones_available()) {
        fprintf(stderr, "cradle-server: --agones: this build has no Agones support (configure with "
                        "-DCRADLE_AGONES=ON and libcurl)\n");
        return 2;
    }
    if (options->resume[0]) return cradle_server_resume_prepare(options);
    return 0;
}

/* Large and cache-line aligned (their rings); zeroed. NULL when out of memory. */
static void *alloc_aligned_zeroed(size_t size) {
    size_t rounded = (size + CRADLE_RING_CACHE_LINE - 1) / CRADLE_RING_CACHE_LINE * CRADLE_RING_CACHE_LINE;
    void *p = aligned_alloc(CRADLE_RING_CACHE_LINE, rounded);
    if (p) memset(p, 0, rounded);
    return p;
}

/* Binds the UDP port with the network thread's settings. Returns 0 or the
 * exit status (2 a bad --bind, 3 the port is taken). */
static int open_network(cradle_server_net *net, cradle_server_host *host, const cradle_server_options *options,
                        security *sec) {
    uint32_t max_peers = host->peer_count; /* cradle_server_peer_table_size */
    cradle_server_net_config nc = {.bind_address = options->bind,
                                   .port = options->port,
                                   .max_peers = max_peers,
                                   .timeout_ms = options->timeout_ms,
                                   .keys = sec->secure ? &sec->keys : NULL,
                                   .issuers = (const uint8_t(*)[CRADLE_TOKEN_KEY_BYTES])sec->issuers,
                                   .issuer_count = sec->issuer_count,
                                   .build_id = host->sim.contract->build_id,
                                   .game = host->sim.contract->name,
                                   .auth_timeout_ms = options->auth_timeout_ms,
                                   .connect_rate = options->connect_rate,
                                   .connect_burst = options->connect_burst,
                                   .snapshot_size = host->snapshot_size};
    int rc = cradle_server_net_open(net, &nc);
    cradle_keys_wipe(&sec->keys); /* the network thread holds its copy */
    if (rc == CRADLE_EINVAL) {
        fprintf(stderr, "cradle-server: --bind must be an IPv4 address, got '%s'\n", options->bind);
        return 2;
    }
    if (rc != 0) {
        cradle_server_say(host, "error", "bind", "cannot listen on UDP %s:%u: %s",
                          options->bind[0] ? options->bind : "*", (unsigned)options->port,
                          rc == CRADLE_ENET_INIT ? "the port is taken, or the address is not one of this machine's"
                                                 : cradle_strerror(rc));
        return 3; /* documented (--help, README): a script may retry another port */
    }
    return 0;
}

/* The "listening" and "serving" lines on stdout, for scripts and people. */
static void print_serving(const cradle_server_host *host, const cradle_server_options *options,
                          const security *sec) {
    char line[512];
    cradle_writer w;
    cradle_writer_init(&w, line, sizeof line);
    if (host->transport_open) cradle_transport_listening_event(&host->transport, &w);
    cradle_writer_text(&w, "{\"event\":\"serving\",\"address\":");
    const char *shown = options->bind[0] ? options->bind : "0.0.0.0";
    cradle_writer_json_string(&w, shown, strlen(shown));
    cradle_writer_format(&w, ",\"port\":%u,\"game\":", (unsigned)options->port);
    cradle_writer_json_string(&w, host->sim.contract->name, strlen(host->sim.contract->name));
    cradle_writer_text(&w, ",\"build\":");
    cradle_writer_json_string(&w, host->sim.contract->build_id, strlen(host->sim.contract->build_id));
    cradle_writer_format(&w, ",\"players\":%u", host->players);
    cradle_writer_text(&w, ",\"server_id\":");
    if (sec->secure)
        cradle_writer_json_string(&w, sec->server_id, strlen(sec->server_id));
    else
        cradle_writer_text(&w, "null");
    cradle_writer_text(&w, "}\n");
    fwrite(line, 1, w.length, stdout);
    fflush(stdout);
}

/* Agones: health pings from now on, Ready now that the port listens.
 * Returns false when the client could not start (the session then stops
 * cleanly: the log still gets its trailer). */
static bool game_thread_alive(void *context, uint64_t now_ms, uint64_t max_silence_ms) {
    return cradle_server_alive(context, now_ms, max_silence_ms);
}

static bool start_agones(cradle_agones *agones, cradle_server_host *host) {
    int rc = cradle_agones_start(agones, &(cradle_agones_config){.alive = game_thread_alive, .alive_context = host});
    if (rc != 0) {
        cradle_server_say(host, "error", "agones", "cannot start the Agones client: %s%s", cradle_strerror(rc),
                          rc == CRADLE_ERANGE ? " (AGONES_SDK_HTTP_PORT must be 1..65535)" : "");
        host->quit = true;
        return false;
    }
    cradle_agones_ready(agones);
    cradle_server_say(host, "info", "agones", "reporting to the Agones SDK at %s", agones->base_url);
    return true;
}

/* The session ended (quit or SIGTERM) and the log is closed: tell Agones. */
static void stop_agones(cradle_agones *agones, cradle_server_host *host) {
    if (!agones->started) return;
    cradle_agones_shutdown(agones);
    cradle_server_say(host, "info", "agones",
                      "shutdown %s (health %llu, withheld %llu, ready %llu, labels %llu, watch updates %llu, "
                      "watch errors %llu, failed calls %llu)",
                      atomic_load(&agones->shutdown_ok) ? "reported" : "NOT reported",
                      (unsigned long long)atomic_load(&agones->health_ok),
                      (unsigned long long)atomic_load(&agones->health_withheld),
                      (unsigned long long)atomic_load(&agones->ready_ok),
                      (unsigned long long)atomic_load(&agones->labels_ok),
                      (unsigned long long)atomic_load(&agones->watch_updates),
                      (unsigned long long)atomic_load(&agones->watch_errors),
                      (unsigned long long)atomic_load(&agones->failures));
}

/* --broadcast: the uploader thread, started before the log opens (its
 * header is the broadcast's start document). Returns 0, 2 for a bad
 * --broadcast-auth file, 1 for anything else. */
static int start_broadcast(cradle_server_host *host, const cradle_server_options *o) {
    if (!o->broadcast[0]) return 0;
    char auth[CRADLE_SERVER_BROADCAST_AUTH_MAX + 1] = "";
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    if (o->broadcast_auth[0] && cradle_server_broadcast_read_auth(o->broadcast_auth, auth, message, sizeof message) != 0) {
        fprintf(stderr, "cradle-server: --broadcast-auth: %s\n", message);
        return 2;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "cradle-server: --broadcast: libcurl failed to initialise\n");
        return 1;
    }
    const cradle_game_contract *c = host->sim.contract;
    uint32_t sound_count;
    const char *const *sounds = cradle_contract_sounds(c, &sound_count);
    cradle_server_broadcast_config config = {.url = o->broadcast,
                                             .auth = auth,
                                             .log_path = o->log,
                                             .game = c->name,
                                             .build = c->build_id,
                                             .library = o->game, /* not the reloader's copy: the twin is beside it */
                                             .sounds = sounds,
                                             .sound_count = sound_count,
                                             .steps_per_second = c->steps_per_second,
                                             .fragment_ms = o->broadcast_fragment_ms,
                                             .keyframe_s = o->broadcast_keyframe_s,
                                             .queue = o->broadcast_queue,
                                             .state_capacity = host->state_capacity,
                                             .block_max = CRADLE_LOG_BLOCK_DEFAULT,
                                             .sign_secret = host->net->secure ? host->net->keys.sign_secret : NULL};
    int rc = cradle_server_broadcast_start(&host->broadcast, &config, message, sizeof message);
    sodium_memzero(auth, sizeof auth);
    if (rc != 0) {
        fprintf(stderr, "cradle-server: --broadcast: %s\n", message);
        return 1;
    }
    cradle_server_say(host, "info", "broadcast", "uploading the session to %s (a fragment every %u ms, a keyframe every %u s%s)",
                      o->broadcast, (unsigned)o->broadcast_fragment_ms, (unsigned)o->broadcast_keyframe_s,
                      o->broadcast_auth[0] ? ", with X-Origin-Auth" : "");
    return 0;
}

/* Runs the session until quit or a signal, then closes it. Returns the exit status. */
static int serve(cradle_server_net *net, cradle_server_host *host, const cradle_server_options *options,
                 const security *sec) {
    print_serving(host, options, sec);
    static cradle_agones agones;
    bool agones_failed = options->agones && !start_agones(&agones, host);
    if (options->agones && !agones_failed) host->agones = &agones; /* labels, the GameServer's state */
    cradle_server_say(host, "info", "start", "hosting '%s' build %s for %u players on UDP port %u (%s mode)",
                      host->sim.contract->name, host->sim.contract->build_id, host->players, (unsigned)options->port,
                      options->mode == CRADLE_SERVER_PACED ? "paced" : "commanded");
    static cradle_server_watchdog watchdog;
    if (cradle_server_watchdog_start(&watchdog, host, &agones, &signalled, options->stop_timeout_ms) != 0) {
        cradle_server_say(host, "warning", "thread", "cannot start the watchdog thread: no stop deadline");
        unblock_signals();
    }
    (void)cradle_server_host_run(host);
    if (signalled) cradle_server_say(host, "info", "signal", "signal %d: stopping", (int)signalled);
    int status = cradle_server_host_finish(host) == 0 && !agones_failed ? 0 : 1;
    cradle_server_watchdog_stop(&watchdog); /* before Agones: the watchdog may use it */
    stop_agones(&agones, host);
    cradle_server_net_stop(net, 500);
    cradle_server_say(host, "info", "stop", "stopped at step %llu", (unsigned long long)host->sim.next_step);
    return status;
}

int main(int argc, char **argv) {
    static cradle_server_options options;
    static security sec;
    switch (cradle_server_options_parse(&options, argc, argv)) {
    case CRADLE_SERVER_RUN: break;
    case CRADLE_SERVER_EXIT_OK: return 0;
    case CRADLE_SERVER_EXIT_USAGE: return 2;
    }
    int status = check_options(&options);
    if (status != 0) return status;
    install_signals();
    if (cradle_enet_pool_initialize() != 0) { /* ENet's memory: the net thread's pool */
        fprintf(stderr, "cradle-server: ENet failed to initialise\n");
        return 1;
    }
    status = 1;
    cradle_server_net *net = alloc_aligned_zeroed(sizeof *net);
    cradle_server_host *host = alloc_aligned_zeroed(sizeof *host);
    if (!net || !host) {
        fprintf(stderr, "cradle-server: out of memory\n");
        goto out_free;
    }
    /* Every step that can refuse the start runs before the log is created
     * (after the UDP port): a failed start leaves no log behind to refuse the
     * retry (a log is never overwritten). */
    int rc = cradle_server_host_init(host, &options, net, &signalled);
    if (rc != 0) {
        if (rc == CRADLE_ERANGE) status = 2; /* --players beyond the game's maximum */
        goto out_host;
    }
    rc = setup_security(&options, &sec);
    if (rc != 0) {
        status = rc;
        goto out_host;
    }
    report_security(host, &options, &sec);
    rc = open_network(net, host, &options, &sec);
    if (rc != 0) {
        status = rc;
        goto out_host;
    }
    rc = start_broadcast(host, &options);
    if (rc != 0) {
        status = rc;
        goto out_net;
    }
    /* --resume opens the new log itself: it starts with the old log's first build. */
    if (options.resume[0] ? cradle_server_resume_replay(host) != 0 : cradle_server_host_open_log(host, NULL, NULL) != 0)
        goto out_net;
    if (cradle_server_net_start(net) != 0) {
        cradle_server_say(host, "error", "thread", "cannot start the network thread");
        goto out_net;
    }
    status = serve(net, host, &options, &sec);
out_net:
    cradle_server_net_stop(net, 0);
    cradle_server_net_close(net);
out_host:
    if (host && host->broadcast) {
        cradle_server_broadcast_stop(host->broadcast);
        host->broadcast = NULL;
        curl_global_cleanup();
    }
    cradle_server_host_deinit(host);
out_free:
    cradle_keys_wipe(&sec.keys);
    free(host);
    free(net);
    enet_deinitialize();
    return status;
}
