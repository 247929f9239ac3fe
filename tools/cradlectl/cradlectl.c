/*
 * cradlectl: sends dev-protocol commands to a Cradle host's Unix socket and
 * prints the replies.
 *
 *   cradlectl --socket PATH status            one command, from the arguments
 *   cradlectl --socket PATH step 10
 *   cradlectl --socket PATH '{"cmd":"step","count":3,"id":7}'   raw JSON
 *   cradlectl --socket PATH --file script.txt one command per line
 *   cradlectl --socket PATH < script.txt      the same from stdin
 *   cradlectl --socket PATH                   a prompt, when stdin is a terminal
 *   cradlectl --socket PATH watch join leave  the host's event stream until it ends
 *
 * On a terminal, replies with several fields (status, players) print as a
 * readable block; in a pipe as one "ok  key=value ..." line; --json prints
 * the raw JSON lines.
 *
 * Exit status: 0 when every reply was ok, 1 when the server answered
 * ok:false (or could not be reached, or did not reply in time), 2 on a usage
 * error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "cradle/cradle.h"
#include "cradle/help.h"
#include "ctl.h"

#define REQUEST_MAX (CRADLE_TRANSPORT_LINE_MAX + 2)
#define REPLY_MAX ((size_t)64 << 20)

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

typedef struct ctl {
    const char *socket_path;
    ctl_format format;
    double timeout_s;
    int fd;
    char *reply;      /* received bytes: [0, reply_length) */
    size_t reply_length, reply_capacity;
    char *request;    /* REQUEST_MAX bytes */
} ctl;

/* The one table of cradlectl's options (help.h): short and long. */
static const cradle_option rows[] = {
    {"socket", 's', "PATH", "the host's dev socket (default: $CRADLE_SOCKET)"},
    {"file", 'f', "FILE", "run the commands in FILE, one per line ('-': stdin)"},
    {"json", 'j', NULL, "print each reply and event as the raw JSON line"},
    {"readable", 'r', NULL, "print replies as readable blocks even when stdout\nis not a terminal (the default on a terminal)"},
    {"timeout", 't', "SECS", "connect and reply timeout (default 5)"},
    {"help", 'h', NULL, "show this help"},
    {"version", 'V', NULL, "show the version"},
};
#define ROWS (sizeof rows / sizeof rows[0])

static void usage(FILE *to) {
    fprintf(to, "usage: cradlectl [options] [COMMAND [ARG...]]\n"
                "Sends dev-protocol commands to a Cradle host and prints the replies.\n\n");
    cradle_options_help(to, rows, ROWS, sizeof rows[0], 24, 1);
    fprintf(to,
            "\nCommands:\n"
            "  status                the host's step, mode and state\n"
            "  step N                advance N steps (commanded hosts)\n"
            "  quit                  stop the host\n"
            "  players               the players table\n"
            "  watch [EVENT...] [every=N]\n"
            "                        subscribe and print the host's events until it ends\n"
            "                        or Ctrl-C: join leave refused desync timeout reload\n"
            "                        pause kick log fell_behind step server (default all;\n"
            "                        'step' prints a line every N steps, default 60)\n"
            "  WORD [KEY=VALUE...]   any other command: {\"cmd\":WORD,KEY:VALUE,...}\n"
            "                        (VALUE goes as a number/true/false/null when it is\n"
            "                        one, else as a string)\n"
            "  '{...}'               a raw JSON request, sent as is\n\n"
            "Without COMMAND the commands come from stdin, one per line (blank lines\n"
            "and lines starting with '#' are skipped), or from a prompt when stdin is\n"
            "a terminal.\n\n"
            "Exit status: 0 all replies ok, 1 a reply was ok:false or the host could not\n"
            "be reached, 2 usage error.\n");
}

/* ---- building requests ---- */

/* A JSON number, true, false or null: sent unquoted. */
static bool json_literal(const char *s) {
    if (!strcmp(s, "true") || !strcmp(s, "false") || !strcmp(s, "null")) return true;
    const char *p = s;
    if (*p == '-') p++;
    if (*p == '0') p++;
    else if (*p >= '1' && *p <= '9') while (*p >= '0' && *p <= '9') p++;
    else return false;
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9')) return false;
        while (*p >= '0' && *p <= '9') p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!(*p >= '0' && *p <= '9')) return false;
        while (*p >= '0' && *p <= '9') p++;
    }
    return *p == '\0';
}

static void put_value(cradle_writer *w, const char *value) {
    if (json_literal(value)) cradle_writer_text(w, value);
    else cradle_writer_json_string(w, value, strlen(value));
}

/* watch [EVENT...] [every=N]: the subscribe request. */
static void build_subscribe(cradle_writer *w, char **words, int count) {
    cradle_writer_text(w, "{\"cmd\":\"subscribe\"");
    const char *every = NULL;
    int names = 0;
    for (int i = 1; i < count; i++) {
        if (!strncmp(words[i], "every=", 6)) {
            every = words[i] + 6;
            continue;
        }
        cradle_writer_text(w, names++ ? "," : ",\"events\":[");
        cradle_writer_json_string(w, words[i], strlen(words[i]));
    }
    if (names) cradle_writer_text(w, "]");
    if (every) {
        cradle_writer_text(w, ",\"every\":");
        put_value(w, every);
    }
    cradle_writer_text(w, "}");
}

/* Turns command words into one request line (with its newline) in
 * c->request. Returns its length, or 0 after writing why into error. */
static size_t build_request(ctl *c, char **words, int count, char *error, size_t error_size) {
    cradle_writer w;
    cradle_writer_init(&w, c->request, REQUEST_MAX);
    if (!strcmp(words[0], "watch")) {
        build_subscribe(&w, words, count);
    } else if (words[0][0] == '{') {
        if (count > 1) {
            snprintf(error, error_size, "a raw JSON request must be a single argument (quote it)");
            return 0;
        }
        if (strchr(words[0], '\n')) {
            snprintf(error, error_size, "a raw JSON request must be one line");
            return 0;
        }
        cradle_writer_text(&w, words[0]);
    } else {
        bool step = strcmp(words[0], "step") == 0, have_count = false;
        cradle_writer_text(&w, "{\"cmd\":");
        cradle_writer_json_string(&w, words[0], strlen(words[0]));
        for (int i = 1; i < count; i++) {
            const char *eq = strchr(words[i], '=');
            if (eq && eq != words[i]) {
                cradle_writer_text(&w, ",");
                cradle_writer_json_string(&w, words[i], (size_t)(eq - words[i]));
                cradle_writer_text(&w, ":");
                put_value(&w, eq + 1);
                have_count = have_count || (eq - words[i] == 5 && !strncmp(words[i], "count", 5));
            } else if (step && !have_count) {
                cradle_writer_text(&w, ",\"count\":");
                put_value(&w, words[i]);
                have_count = true;
            } else {
                snprintf(error, error_size, "unexpected argument '%s' for '%s' (arguments are KEY=VALUE)", words[i],
                         words[0]);
                return 0;
            }
        }
        cradle_writer_text(&w, "}");
    }
    cradle_writer_text(&w, "\n");
    if (w.overflow) {
        snprintf(error, error_size, "the request is longer than a line may be (1 MiB)");
        return 0;
    }
    return w.length;
}

/* ---- the connection ---- */

static int connect_host(ctl *c) {
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(c->socket_path) >= sizeof address.sun_path) {
        fprintf(stderr, "cradlectl: socket path is longer than %zu bytes: %s\n", sizeof address.sun_path - 1,
                c->socket_path);
        return EXIT_FAILED;
    }
    memcpy(address.sun_path, c->socket_path, strlen(c->socket_path) + 1);
    c->fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (c->fd < 0) {
        fprintf(stderr, "cradlectl: socket: %s\n", strerror(errno));
        return EXIT_FAILED;
    }
    /* The timeouts bound connect (a full backlog), each send and each wait
     * for a reply, so no state of the host can hang cradlectl. */
    struct timeval tv = {.tv_sec = (time_t)c->timeout_s,
                         .tv_usec = (suseconds_t)((c->timeout_s - (double)(time_t)c->timeout_s) * 1e6)};
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (connect(c->fd, (const struct sockaddr *)&address, sizeof address) != 0) {
        int err = errno;
        if (err == ENOENT || err == ECONNREFUSED) {
            fprintf(stderr, "cradlectl: no server listens at %s (%s)\n", c->socket_path, strerror(err));
        } else if (err == EAGAIN || err == EINPROGRESS || err == ETIMEDOUT) {
            fprintf(stderr, "cradlectl: the server at %s did not accept within %g s\n", c->socket_path, c->timeout_s);
        } else {
            fprintf(stderr, "cradlectl: cannot connect to %s: %s\n", c->socket_path, strerror(err));
        }
        close(c->fd);
        c->fd = -1;
        return EXIT_FAILED;
    }
    return EXIT_OK;
}

/* Sends length bytes. A server that closed the connection (EPIPE,
 * ECONNRESET) is not reported here: *closed is set, since it may have said
 * why first (a refusal when its dev connections are all in use), and the
 * caller reads that. */
static int send_all(ctl *c, const char *data, size_t length, bool *closed) {
    *closed = false;
    while (length > 0) {
        ssize_t n = send(c->fd, data, length, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (errno == EPIPE || errno == ECONNRESET) {
                *closed = true;
            } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
                fprintf(stderr, "cradlectl: the server took no input for %g s\n", c->timeout_s);
            } else {
                fprintf(stderr, "cradlectl: sending to %s: %s\n", c->socket_path, strerror(errno));
            }
            return EXIT_FAILED;
        }
        data += n;
        length -= (size_t)n;
    }
    return EXIT_OK;
}

/* Reads until a whole line is buffered; *line_length excludes the newline.
 * quiet: a connection that ends without a line is not reported (the caller
 * says what it means). */
static int read_reply(ctl *c, size_t *line_length, bool quiet) {
    for (;;) {
        char *nl = memchr(c->reply, '\n', c->reply_length);
        if (nl) {
            *line_length = (size_t)(nl - c->reply);
            return EXIT_OK;
        }
        if (c->reply_length == c->reply_capacity) {
            if (c->reply_capacity >= REPLY_MAX) {
                fprintf(stderr, "cradlectl: reply longer than %zu bytes\n", REPLY_MAX);
                return EXIT_FAILED;
            }
            char *grown = realloc(c->reply, c->reply_capacity * 2);
            if (!grown) {
                fprintf(stderr, "cradlectl: out of memory\n");
                return EXIT_FAILED;
            }
            c->reply = grown;
            c->reply_capacity *= 2;
        }
        ssize_t n = recv(c->fd, c->reply + c->reply_length, c->reply_capacity - c->reply_length, 0);
        if (n > 0) {
            c->reply_length += (size_t)n;
        } else if (n == 0) {
            if (!quiet) fprintf(stderr, "cradlectl: the server closed the connection without a reply\n");
            return EXIT_FAILED;
        } else if (errno != EINTR) {
            if (quiet && errno == ECONNRESET) return EXIT_FAILED;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                fprintf(stderr, "cradlectl: no reply within %g s\n", c->timeout_s);
            } else {
                fprintf(stderr, "cradlectl: reading from %s: %s\n", c->socket_path, strerror(errno));
            }
            return EXIT_FAILED;
        }
    }
}

/* Sends one request (length bytes in c->request) and prints its reply. When
 * the server closed the connection before the request went, the line it
 * sent before closing is the reply (a refusal), if it sent one. */
static int round_trip(ctl *c, size_t length) {
    bool closed = false;
    int rc = send_all(c, c->request, length, &closed);
    size_t line_length = 0;
    if (rc == EXIT_OK || closed) rc = read_reply(c, &line_length, closed);
    if (closed && rc != EXIT_OK)
        fprintf(stderr, "cradlectl: the server at %s closed the connection before the request, saying nothing\n",
                c->socket_path);
    if (rc != EXIT_OK) return -1;
    rc = ctl_show_reply(c->format, c->reply, line_length);
    c->reply_length -= line_length + 1;
    memmove(c->reply, c->reply + line_length + 1, c->reply_length);
    return rc;
}

/* ---- modes ---- */

static volatile sig_atomic_t watch_stopped = 0;

static void on_watch_signal(int signal_number) {
    (void)signal_number;
    watch_stopped = 1;
}

/* watch: the subscribe reply, then every event line until the host closes
 * the stream (quit, or dropped for not reading) or SIGINT/SIGTERM. Exit 0
 * when the host or the user ended it, 1 when it was refused or dropped. */
static int run_watch(ctl *c, size_t length) {
    int rc = round_trip(c, length);
    if (rc != EXIT_OK) return EXIT_FAILED;
    struct sigaction stop = {.sa_handler = on_watch_signal}; /* no SA_RESTART: recv returns EINTR */
    sigemptyset(&stop.sa_mask);
    sigaction(SIGINT, &stop, NULL);
    sigaction(SIGTERM, &stop, NULL);
    struct timeval forever = {0};
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &forever, sizeof forever);
    if (c->format != CTL_JSON) {
        fprintf(stderr, "cradlectl: watching %s (Ctrl-C to stop)\n", c->socket_path);
    }
    for (;;) {
        size_t line_length = 0;
        char *nl = memchr(c->reply, '\n', c->reply_length);
        if (!nl) {
            if (c->reply_length == c->reply_capacity) {
                fprintf(stderr, "cradlectl: an event line longer than %zu bytes\n", c->reply_capacity);
                return EXIT_FAILED;
            }
            ssize_t n = recv(c->fd, c->reply + c->reply_length, c->reply_capacity - c->reply_length, 0);
            if (n > 0) {
                c->reply_length += (size_t)n;
                continue;
            }
            if (n < 0 && errno == EINTR) {
                if (watch_stopped) return EXIT_OK;
                continue;
            }
            if (n == 0) return EXIT_OK; /* the host ended the stream */
            fprintf(stderr, "cradlectl: reading from %s: %s\n", c->socket_path, strerror(errno));
            return EXIT_FAILED;
        }
        line_length = (size_t)(nl - c->reply);
        rc = ctl_show_event(c->format, c->reply, line_length);
        c->reply_length -= line_length + 1;
        memmove(c->reply, c->reply + line_length + 1, c->reply_length);
        if (rc == 2) {
            fprintf(stderr, "cradlectl: the host dropped this watch: it did not read fast enough\n");
            return EXIT_FAILED;
        }
    }
}

/* Splits a script line into words at blanks (no quoting), in place. */
static int split_words(char *line, char **words, int max) {
    int n = 0;
    for (char *p = line; *p && n < max;) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) break;
        words[n++] = p;
        while (*p && *p != ' ' && *p != '\t') p++;
        if (*p) *p++ = '\0';
    }
    return n;
}

/* Runs the commands in `in` one line at a time; returns the exit status. */
static int run_lines(ctl *c, FILE *in, const char *name, bool interactive) {
    int status = EXIT_OK;
    char *line = NULL;
    size_t capacity = 0;
    unsigned long number = 0;
    for (;;) {
        if (interactive) {
            fputs("cradle> ", stdout);
            fflush(stdout);
        }
        ssize_t got = getline(&line, &capacity, in);
        if (got < 0) break;
        number++;
        while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r')) line[--got] = '\0';
        char *start = line;
        while (*start == ' ' || *start == '\t') start++;
        if (*start == '\0' || *start == '#') continue;
        if (interactive && (!strcmp(start, "exit") || !strcmp(start, "help"))) {
            if (!strcmp(start, "exit")) break;
            usage(stdout);
            continue;
        }
        char *words[64];
        int count = 1;
        if (*start == '{') words[0] = start; /* raw JSON: blanks belong to it */
        else count = split_words(start, words, 64);
        char error[256];
        size_t length = build_request(c, words, count, error, sizeof error);
        if (length == 0) {
            fprintf(stderr, "cradlectl: %s:%lu: %s\n", name, number, error);
            status = EXIT_FAILED;
            continue;
        }
        int rc = round_trip(c, length);
        if (rc < 0) {
            status = EXIT_FAILED;
            break;
        }
        if (rc != EXIT_OK && !interactive) status = EXIT_FAILED;
        /* quit ends the host; later lines would find no server. */
        if (interactive && !strncmp(c->request, "{\"cmd\":\"quit\"", 13)) break;
    }
    free(line);
    return status;
}

int main(int argc, char **argv) {
    ctl c = {.socket_path = getenv("CRADLE_SOCKET"), .timeout_s = 5.0, .fd = -1};
    const char *file = NULL;
    struct option options[ROWS + 1];
    char shorts[2 * ROWS + 2] = "+"; /* '+': options end at the first command word, so "step -1"
                                        reaches the host */
    cradle_options_getopt(rows, ROWS, sizeof rows[0], options, shorts + 1);
    int opt;
    bool json = false, readable = false;
    while ((opt = getopt_long(argc, argv, shorts, options, NULL)) != -1) {
        switch (opt) {
        case 's': c.socket_path = optarg; break;
        case 'f': file = optarg; break;
        case 'j': json = true; break;
        case 'r': readable = true; break;
        case 't': {
            char *end = NULL;
            c.timeout_s = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || !(c.timeout_s > 0 && c.timeout_s <= 86400)) {
                fprintf(stderr, "cradlectl: --timeout must be a number of seconds above 0 and up to 86400, got '%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        }
        case 'h': usage(stdout); return EXIT_OK;
        case 'V': {
            char version[CRADLE_VERSION_TEXT_MAX];
            cradle_version_text(version, sizeof version, "cradlectl", NULL);
            printf("%s\n", version);
            return EXIT_OK;
        }
        default: usage(stderr); return EXIT_USAGE;
        }
    }
    c.format = json ? CTL_JSON : readable || isatty(STDOUT_FILENO) ? CTL_READABLE : CTL_LINE;
    if (c.socket_path == NULL || c.socket_path[0] == '\0') {
        fprintf(stderr, "cradlectl: no socket: pass --socket PATH or set CRADLE_SOCKET\n");
        return EXIT_USAGE;
    }
    if (file && optind < argc) {
        fprintf(stderr, "cradlectl: give either --file or a command, not both\n");
        return EXIT_USAGE;
    }
    c.request = malloc(REQUEST_MAX);
    c.reply_capacity = 4096;
    c.reply = malloc(c.reply_capacity);
    if (!c.request || !c.reply) {
        fprintf(stderr, "cradlectl: out of memory\n");
        return EXIT_FAILED;
    }

    int status = EXIT_OK;
    size_t one_shot = 0;
    if (optind < argc) {
        char error[256];
        one_shot = build_request(&c, argv + optind, argc - optind, error, sizeof error);
        if (one_shot == 0) {
            fprintf(stderr, "cradlectl: %s\n", error);
            status = EXIT_USAGE;
            goto out;
        }
    }
    FILE *script = NULL;
    if (file && strcmp(file, "-") != 0) {
        script = fopen(file, "r");
        if (!script) {
            fprintf(stderr, "cradlectl: cannot open %s: %s\n", file, strerror(errno));
            status = EXIT_USAGE;
            goto out;
        }
    }
    status = connect_host(&c);
    if (status == EXIT_OK) {
        if (one_shot && !strcmp(argv[optind], "watch")) {
            status = run_watch(&c, one_shot);
        } else if (one_shot) {
            int rc = round_trip(&c, one_shot);
            status = rc < 0 ? EXIT_FAILED : rc;
        } else if (script) {
            status = run_lines(&c, script, file, false);
        } else {
            status = run_lines(&c, stdin, "stdin", !file && isatty(STDIN_FILENO));
        }
    }
    if (script) fclose(script);
out:
    if (c.fd >= 0) close(c.fd);
    free(c.request);
    free(c.reply);
    return status;
}
