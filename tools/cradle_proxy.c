/*
 * cradle-proxy: a UDP impairment proxy for testing Cradle over a bad network
 * on one machine (this kernel has no netem).
 *
 *   clients ──UDP──> --listen ADDR:PORT  [cradle-proxy]  ──UDP──> --server ADDR:PORT
 *
 * Every datagram in either direction goes through the scheduler in
 * proxy_sched.c (loss, latency with jitter, reordering, duplicates, from a
 * seeded PRNG). Each client address gets its own upstream socket, so the
 * server sees one distinct peer per client. The flow table and the delay
 * queue are allocated once at start-up: memory is bounded by --capacity.
 *
 * On start it prints one JSON line on stdout with the settings and the seed
 * (so a run can be repeated exactly with --seed), then the counters as one
 * JSON line on SIGUSR1 and on exit (SIGINT/SIGTERM, exit 0). A usage error
 * exits 2, a socket error 1; --help and --version exit 0.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cradle/help.h"
#include "cradle/parse.h"
#include "cradle/systime.h"
#include "cradle/version.h"
#include "proxy_relay.h"

#define DEFAULT_CAPACITY 8192u
#define MAX_CAPACITY (1u << 20)

/* --latency-at S:MS: from S seconds after start, a one-way latency of MS. */
#define LATENCY_CHANGES_MAX 8u
typedef struct latency_change {
    uint64_t at_s;
    uint32_t latency_ms;
} latency_change;

typedef struct proxy {
    struct sockaddr_in listen_addr, server_addr; /* from the command line */
    latency_change changes[LATENCY_CHANGES_MAX]; /* in time order */
    uint32_t change_count, changes_done;
    uint64_t started_us;
    cradle_proxy_relay relay;
} proxy;

static volatile sig_atomic_t stop_signal, report_requested;

static void on_stop(int signo) { stop_signal = signo; }
static void on_report(int signo) {
    (void)signo;
    report_requested = 1;
}

static uint64_t now_us(void) { return cradle_mono_ns() / 1000u; }

enum { O_LISTEN = 1, O_SERVER, O_PROFILE, O_LATENCY, O_JITTER, O_LOSS, O_DUP, O_REORDER, O_LATENCY_AT, O_SEED,
       O_CAP, O_HELP, O_VERSION };
/* The one table of cradle-proxy's options (help.h), in the enum's order. */
static const cradle_option rows[] = {
    {"listen", O_LISTEN, "ADDR:PORT", "where clients send (PORT 0: any free port, printed)"},
    {"server", O_SERVER, "ADDR:PORT", "where the server listens"},
    {"profile", O_PROFILE, "NAME", "netcode: 250 ms latency, 250 ms jitter, 5% loss, 10% duplicates\n"
                                   "yojimbo: 1000 ms latency, 100 ms jitter, 25% loss, 25% duplicates\n"
                                   "none: no impairment (the default); flags below override it"},
    {"latency", O_LATENCY, "MS", "one-way delay in each direction, 0..60000"},
    {"jitter", O_JITTER, "MS", "uniform +-MS added to each delay (clamped at 0), 0..60000"},
    {"loss", O_LOSS, "PCT", "packets dropped, 0..100"},
    {"duplicate", O_DUP, "PCT", "packets sent twice (the copy with its own delay), 0..100"},
    {"reorder", O_REORDER, "PCT", "packets held back 1..100 ms so later ones overtake, 0..100"},
    {"latency-at", O_LATENCY_AT, "S:MS", "from S seconds after start on, a one-way delay of MS\n"
                                         "(0..86400 s, 0..60000 ms; up to 8, in time order;\n"
                                         "packets in flight keep theirs): a link that changes"},
    {"seed", O_SEED, "N", "PRNG seed, 0..2^64-1 (default: from the clock, printed)"},
    {"capacity", O_CAP, "N", "packets in flight at most, 1..1048576 (default 8192);\n"
                             "beyond it packets are dropped and counted"},
    {"help", O_HELP, NULL, "show this help"},
    {"version", O_VERSION, NULL, "show the version"},
};
#define ROWS (sizeof rows / sizeof rows[0])

static void usage(FILE *to) {
    fprintf(to, "usage: cradle-proxy --listen ADDR:PORT --server ADDR:PORT [options]\n"
                "Forwards UDP between clients and a server, impairing it from a seeded PRNG.\n\n");
    cradle_options_help(to, rows, ROWS, sizeof rows[0], 23, 0);
    fprintf(to, "Prints its settings as JSON on start, counters on SIGUSR1 and on exit.\n"
                "Exit status: 0 after SIGINT/SIGTERM, 1 socket error, 2 usage.\n");
}

/* "A.B.C.D:PORT" into addr. port_min 0 lets the kernel choose. */
static bool parse_address(const char *text, uint64_t port_min, struct sockaddr_in *addr) {
    const char *colon = strrchr(text, ':');
    char host[64];
    uint64_t port = 0;
    if (!colon || (size_t)(colon - text) >= sizeof host) return false;
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    if (!cradle_parse_u64(colon + 1, port_min, 65535, &port)) return false;
    memset(addr, 0, sizeof *addr);
    addr->sin_family = AF_INET;
    addr->sin_port = htons((uint16_t)port);
    return inet_pton(AF_INET, host, &addr->sin_addr) == 1;
}

static const char *show(const struct sockaddr_in *a, char *buf, size_t size) {
    char host[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
    snprintf(buf, size, "%s:%u", host, (unsigned)ntohs(a->sin_port));
    return buf;
}

static void print_counters(const proxy *p, const char *event) {
    const cradle_proxy_relay *r = &p->relay;
    const cradle_proxy_counters *c = &r->sched.counters;
    printf("{\"event\":\"%s\",\"submitted\":%" PRIu64 ",\"lost\":%" PRIu64 ",\"duplicated\":%" PRIu64
           ",\"reordered\":%" PRIu64 ",\"overflowed\":%" PRIu64 ",\"released\":%" PRIu64
           ",\"in_flight\":%u,\"oversize\":%" PRIu64 ",\"stale\":%" PRIu64 ",\"send_errors\":%" PRIu64
           ",\"flows_opened\":%" PRIu64 ",\"flows_recycled\":%" PRIu64 ",\"bytes_in\":%" PRIu64
           ",\"bytes_out\":%" PRIu64 "}\n",
           event, c->submitted, c->lost, c->duplicated, c->reordered, c->overflowed, c->released,
           cradle_proxy_sched_count(&r->sched), r->oversize, r->stale, r->send_errors, r->flows_opened,
           r->flows_recycled, r->bytes_in, r->bytes_out);
    fflush(stdout);
}

/* What the command line asked for; explicit flags override the profile
 * whatever their order, so they are kept aside until the end (-1: not set). */
typedef struct settings {
    const char *profile;
    int64_t latency, jitter, loss, dup, reorder;
    bool have_listen, have_server, have_seed;
    uint64_t seed, capacity;
} settings;


/* One option. Returns -1 to go on, or the exit status (0 after --help or
 * --version, 2 on a usage error, named). */
static int take_option(proxy *p, settings *st, int opt, const char *value) {
    char name[32];
    snprintf(name, sizeof name, "--%s", opt > 0 && opt <= O_VERSION ? rows[opt - 1].name : "?");
    uint64_t v = 0;
    switch (opt) {
    case O_LISTEN:
    case O_SERVER:
        if (!parse_address(value, opt == O_LISTEN ? 0 : 1, opt == O_LISTEN ? &p->listen_addr : &p->server_addr)) {
            fprintf(stderr, "cradle-proxy: %s must be IPV4:PORT (port %s..65535), got '%s'\n", name,
                    opt == O_LISTEN ? "0" : "1", value);
            return 2;
        }
        *(opt == O_LISTEN ? &st->have_listen : &st->have_server) = true;
        return -1;
    case O_PROFILE:
        if (strcmp(value, "netcode") && strcmp(value, "yojimbo") && strcmp(value, "none")) {
            fprintf(stderr, "cradle-proxy: --profile must be netcode, yojimbo or none, got '%s'\n", value);
            return 2;
        }
        st->profile = value;
        return -1;
    case O_LATENCY:
    case O_JITTER:
        if (!cradle_parse_u64(value, 0, CRADLE_PROXY_DELAY_MAX_MS, &v)) {
            fprintf(stderr, "cradle-proxy: %s must be milliseconds from 0 to %u, got '%s'\n", name,
                    CRADLE_PROXY_DELAY_MAX_MS, value);
            return 2;
        }
        *(opt == O_LATENCY ? &st->latency : &st->jitter) = (int64_t)v;
        return -1;
    case O_LOSS:
    case O_DUP:
    case O_REORDER:
        if (!cradle_parse_u64(value, 0, 100, &v)) {
            fprintf(stderr, "cradle-proxy: %s must be a whole percentage from 0 to 100, got '%s'\n", name, value);
            return 2;
        }
        *(opt == O_LOSS ? &st->loss : opt == O_DUP ? &st->dup : &st->reorder) = (int64_t)v;
        return -1;
    case O_SEED:
        if (!cradle_parse_u64(value, 0, UINT64_MAX, &st->seed)) {
            fprintf(stderr, "cradle-proxy: --seed must be an integer from 0 to 18446744073709551615, got '%s'\n",
                    value);
            return 2;
        }
        st->have_seed = true;
        return -1;
    case O_CAP:
        if (!cradle_parse_u64(value, 1, MAX_CAPACITY, &st->capacity)) {
            fprintf(stderr, "cradle-proxy: --capacity must be an integer from 1 to %u, got '%s'\n", MAX_CAPACITY,
                    value);
            return 2;
        }
        return -1;
    case O_LATENCY_AT: {
        const char *colon = strchr(value, ':');
        char secs[24];
        uint64_t at = 0, ms = 0;
        bool ok = colon && (size_t)(colon - value) < sizeof secs;
        if (ok) {
            memcpy(secs, value, (size_t)(colon - value));
            secs[colon - value] = '\0';
            ok = cradle_parse_u64(secs, 0, 86400, &at) && cradle_parse_u64(colon + 1, 0, CRADLE_PROXY_DELAY_MAX_MS, &ms);
        }
        if (!ok) {
            fprintf(stderr, "cradle-proxy: --latency-at must be SECONDS:MS (0..86400 s, 0..%u ms), got '%s'\n",
                    CRADLE_PROXY_DELAY_MAX_MS, value);
            return 2;
        }
        if (p->change_count == LATENCY_CHANGES_MAX ||
            (p->change_count && at < p->changes[p->change_count - 1].at_s)) {
            fprintf(stderr, "cradle-proxy: --latency-at: at most %u, in time order, got '%s'\n", LATENCY_CHANGES_MAX,
                    value);
            return 2;
        }
        p->changes[p->change_count++] = (latency_change){.at_s = at, .latency_ms = (uint32_t)ms};
        return -1;
    }
    case O_HELP: usage(stdout); return 0;
    case O_VERSION: {
        char version[CRADLE_VERSION_TEXT_MAX];
        cradle_version_text(version, sizeof version, "cradle-proxy", NULL);
        printf("%s\n", version);
        return 0;
    }
    }
    return 2;
}

/* The command line into p's addresses and st. Returns -1 to run, or the exit status. */
static int parse_args(int argc, char **argv, proxy *p, settings *st) {
    *st = (settings){.profile = "none", .latency = -1, .jitter = -1, .loss = -1, .dup = -1, .reorder = -1,
                     .capacity = DEFAULT_CAPACITY};
    int opt;
    opterr = 0;
    struct option long_options[ROWS + 1];
    cradle_options_getopt(rows, ROWS, sizeof rows[0], long_options, NULL);
    while ((opt = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
        if (opt == '?' || opt == ':') {
            fprintf(stderr, "cradle-proxy: unknown option or missing value in '%s'\n", argv[optind - 1]);
            usage(stderr);
            return 2;
        }
        int rc = take_option(p, st, opt, optarg);
        if (rc >= 0) return rc;
    }
    if (optind != argc) {
        fprintf(stderr, "cradle-proxy: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (!st->have_listen || !st->have_server) {
        fprintf(stderr, "cradle-proxy: --listen and --server are required\n");
        usage(stderr);
        return 2;
    }
    return -1;
}

/* The profile's impairment, then each explicit flag over it. */
static cradle_proxy_impairment impairment_of(const settings *st) {
    cradle_proxy_impairment config = {0};
    if (strcmp(st->profile, "netcode") == 0)
        config = (cradle_proxy_impairment){.latency_ms = 250, .jitter_ms = 250, .loss_pct = 5, .duplicate_pct = 10};
    else if (strcmp(st->profile, "yojimbo") == 0)
        config = (cradle_proxy_impairment){.latency_ms = 1000, .jitter_ms = 100, .loss_pct = 25, .duplicate_pct = 25};
    if (st->latency >= 0) config.latency_ms = (uint32_t)st->latency;
    if (st->jitter >= 0) config.jitter_ms = (uint32_t)st->jitter;
    if (st->loss >= 0) config.loss_pct = (uint32_t)st->loss;
    if (st->dup >= 0) config.duplicate_pct = (uint32_t)st->dup;
    if (st->reorder >= 0) config.reorder_pct = (uint32_t)st->reorder;
    config.seed = st->have_seed ? st->seed : cradle_wall_ns() ^ ((uint64_t)getpid() << 32);
    return config;
}

static void install_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sa.sa_handler = on_report;
    sigaction(SIGUSR1, &sa, NULL);
}

/* The settings as JSON on stdout and for people on stderr (the seed repeats a run). */
static void print_settings(const proxy *p, const char *profile, const cradle_proxy_impairment *config) {
    char a[64], b[64];
    printf("{\"event\":\"proxy\",\"listen\":\"%s\",\"server\":\"%s\",\"profile\":\"%s\",\"latency_ms\":%u,"
           "\"jitter_ms\":%u,\"loss_pct\":%u,\"duplicate_pct\":%u,\"reorder_pct\":%u,\"seed\":%" PRIu64
           ",\"capacity\":%u}\n",
           show(&p->relay.listen_addr, a, sizeof a), show(&p->server_addr, b, sizeof b), profile, config->latency_ms,
           config->jitter_ms, config->loss_pct, config->duplicate_pct, config->reorder_pct, config->seed,
           p->relay.capacity);
    fflush(stdout);
    fprintf(stderr,
            "cradle-proxy: %s -> %s: latency %u ms, jitter %u ms, loss %u%%, duplicate %u%%, reorder %u%%, "
            "seed %" PRIu64 " (repeat with --seed %" PRIu64 ")\n",
            a, b, config->latency_ms, config->jitter_ms, config->loss_pct, config->duplicate_pct,
            config->reorder_pct, config->seed, config->seed);
}

/* The --latency-at changes that are due: the latency of packets from now on. */
static void apply_latency_changes(proxy *p, uint64_t now) {
    while (p->changes_done < p->change_count &&
           now >= p->started_us + p->changes[p->changes_done].at_s * 1000000u) {
        const latency_change *c = &p->changes[p->changes_done++];
        p->relay.sched.config.latency_ms = c->latency_ms;
        printf("{\"event\":\"latency\",\"after_s\":%" PRIu64 ",\"latency_ms\":%u}\n", c->at_s, c->latency_ms);
        fflush(stdout);
        fprintf(stderr, "cradle-proxy: %" PRIu64 " s: latency now %u ms each way\n", c->at_s, c->latency_ms);
    }
}

/* Forwards until SIGINT or SIGTERM, a relay turn at a time, woken for the
 * next scheduled release or latency change. Returns false when poll fails. */
static bool forward(proxy *p) {
    while (!stop_signal) {
        if (report_requested) {
            report_requested = 0;
            print_counters(p, "counters");
        }
        uint64_t now = now_us();
        apply_latency_changes(p, now);
        int timeout = 1000;
        if (p->changes_done < p->change_count) {
            uint64_t due = p->started_us + p->changes[p->changes_done].at_s * 1000000u;
            uint64_t wait = due > now ? (due - now + 999u) / 1000u : 0;
            if (wait < (uint64_t)timeout) timeout = (int)wait;
        }
        if (!cradle_proxy_relay_turn(&p->relay, timeout)) {
            fprintf(stderr, "cradle-proxy: poll: %s\n", strerror(errno));
            return false;
        }
    }
    print_counters(p, "exit");
    return true;
}

int main(int argc, char **argv) {
    static proxy p;
    settings st;
    int rc = parse_args(argc, argv, &p, &st);
    if (rc >= 0) return rc;
    cradle_proxy_impairment config = impairment_of(&st);
    char message[160];
    if (cradle_proxy_relay_open(&p.relay, &p.listen_addr, &p.server_addr, &config, (uint32_t)st.capacity, message,
                                sizeof message) != 0) {
        fprintf(stderr, "cradle-proxy: %s\n", message);
        return 1;
    }
    install_signals();
    print_settings(&p, st.profile, &config);
    p.started_us = now_us();
    int status = forward(&p) ? 0 : 1;
    cradle_proxy_relay_close(&p.relay);
    return status;
}
