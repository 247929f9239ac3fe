#define _GNU_SOURCE /* struct ucred (SO_PEERCRED), ppoll */
#include "cradle/transport.h"
#include "cradle/systime.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* Input space past the longest line, so one read always has room. */
#define READ_CHUNK ((size_t)64 * 1024)
#define DEFAULT_OUTPUT ((size_t)256 * 1024)
#define DEFAULT_RESERVE ((size_t)64 * 1024)
#define DEFAULT_SCRATCH ((size_t)64 * 1024)
#define DEFAULT_LINES_PER_POLL 256u
/* The smallest reserve that still fits a "full" or "line_too_long" error line. */
#define MIN_RESERVE ((size_t)256)
#define CLOSE_FLUSH_MS 1000
/* poll_owner values that are not connection indexes */
#define OWNER_LISTENER UINT32_MAX
#define OWNER_WATCHED (UINT32_MAX - 1u)

_Static_assert(sizeof(((cradle_transport *)0)->path) == sizeof(((struct sockaddr_un *)0)->sun_path),
               "path buffer matches sun_path");

/* One client: the stdio pair or a socket (in_fd == out_fd). A free socket
 * slot has in_fd == -1. The input buffer holds [in_start, in_len) unhandled
 * bytes; scan is where the search for the next newline resumes. The output
 * queue holds [out_head, out_len) unsent bytes. */
typedef struct cradle__transport_conn {
    int in_fd;
    int out_fd;
    bool stdio;
    bool read_closed; /* the peer sent end-of-file (or reading failed) */
    bool discarding;  /* inside an overlong line: drop bytes up to its newline */
    bool broken;      /* writing failed: the peer is gone */
    char *in;
    size_t in_start, in_len, scan;
    char *out;
    size_t out_head, out_len;
    uint64_t topics;  /* subscribed event topics; 0: not a subscriber */
    bool dropping;    /* a slow subscriber: its last line is queued, it closes once sent */
} conn;

static size_t in_capacity(const cradle_transport *t) { return t->config.line_max + 1 + READ_CHUNK; }

static size_t out_space(const cradle_transport *t, const conn *c) {
    return t->config.output_bytes - (c->out_len - c->out_head);
}

static bool conn_active(const conn *c) { return c->in_fd >= 0; }

static uint64_t monotonic_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int set_flags(int fd) {
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0) return -1;
    return fcntl(fd, F_SETFD, FD_CLOEXEC);
}

static void make_address(struct sockaddr_un *address, const char *path) {
    memset(address, 0, sizeof *address);
    address->sun_family = AF_UNIX;
    memcpy(address->sun_path, path, strlen(path) + 1);
}

/* Whatever is at the path: nothing (0), our kind of stale socket (removed,
 * 0), a live server (LIVE), something else (FOREIGN) or an error (EIO). */
static int clear_path(cradle_transport *t) {
    struct stat st;
    if (lstat(t->path, &st) != 0) {
        if (errno == ENOENT) return 0;
        t->system_error = errno;
        return CRADLE_EIO;
    }
    if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) return CRADLE_ETRANSPORT_FOREIGN;
    int probe = socket(AF_UNIX, SOCK_STREAM, 0);
    if (probe < 0) {
        t->system_error = errno;
        return CRADLE_EIO;
    }
    struct sockaddr_un address;
    make_address(&address, t->path);
    int rc = connect(probe, (const struct sockaddr *)&address, sizeof address);
    int err = errno;
    close(probe);
    if (rc == 0 || err == EAGAIN) return CRADLE_ETRANSPORT_LIVE;
    if (err != ECONNREFUSED && err != ENOENT) {
        t->system_error = err;
        return CRADLE_EIO;
    }
    /* Nobody answers: a server died without removing it. */
    if (unlink(t->path) != 0 && errno != ENOENT) {
        t->system_error = errno;
        return CRADLE_EIO;
    }
    return 0;
}

/* The socket's directory: created 0700 when missing; refused when it is not
 * a directory, belongs to another user (root excepted), or group or others
 * may write it (they could replace the socket with their own) without the
 * sticky bit. In a sticky directory owned by root or us (/tmp) nobody else
 * can unlink or rename our socket; what they can do is put a file, a
 * symlink or a socket at the path before we start, which clear_path refuses
 * (and bind() never follows a symlink: it fails with EADDRINUSE), and the
 * file is ours from bind on (fchmod before bind). */
static int check_directory(cradle_transport *t) {
    char dir[sizeof t->path];
    memcpy(dir, t->path, sizeof dir);
    char *slash = strrchr(dir, '/');
    if (!slash)
        memcpy(dir, ".", 2);
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (errno != ENOENT || (mkdir(dir, S_IRWXU) != 0 && errno != EEXIST) || stat(dir, &st) != 0) {
            t->system_error = errno;
            return CRADLE_EIO;
        }
    }
    if (!S_ISDIR(st.st_mode) || (st.st_uid != geteuid() && st.st_uid != 0) ||
        ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0))
        return CRADLE_ETRANSPORT_DIR;
    return 0;
}

static int listen_on(cradle_transport *t) {
    int rc = check_directory(t);
    if (rc != 0) return rc;
    rc = clear_path(t);
    if (rc != 0) return rc;
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || set_flags(fd) != 0) goto out_io;
    /* On Linux bind gives the file the socket inode's mode (minus umask), so
     * fchmod first leaves no moment at which the file is open to others;
     * the chmod after bind covers systems where it does not. */
    if (fchmod(fd, S_IRUSR | S_IWUSR) != 0) goto out_io;
    struct sockaddr_un address;
    make_address(&address, t->path);
    if (bind(fd, (const struct sockaddr *)&address, sizeof address) != 0) {
        if (errno == EADDRINUSE) {
            close(fd);
            return CRADLE_ETRANSPORT_LIVE; /* another server won the race */
        }
        goto out_io;
    }
    struct stat st;
    mode_t mode = S_IRUSR | S_IWUSR | (t->config.peer_group ? S_IRGRP | S_IWGRP : 0);
    if ((t->config.peer_group && chown(t->path, (uid_t)-1, (gid_t)t->config.peer_gid) != 0) ||
        chmod(t->path, mode) != 0 || lstat(t->path, &st) != 0 || listen(fd, 128) != 0) {
        int err = errno;
        unlink(t->path);
        errno = err;
        goto out_io;
    }
    t->socket_device = (uint64_t)st.st_dev;
    t->socket_inode = (uint64_t)st.st_ino;
    t->listen_fd = fd;
    return 0;
out_io:
    t->system_error = errno;
    if (fd >= 0) close(fd);
    return CRADLE_EIO;
}

static void free_buffers(cradle_transport *t) {
    if (t->conns) free(t->conns[0].in);
    free(t->conns);
    free(t->pollfds);
    free(t->poll_owner);
    free(t->scratch_block);
    t->conns = NULL;
    t->pollfds = NULL;
    t->poll_owner = NULL;
    t->scratch_block = NULL;
}

int cradle_transport_open(cradle_transport *transport, const cradle_transport_config *config) {
    assert(transport != NULL && config != NULL);
    cradle_transport *t = transport;
    *t = (cradle_transport){.listen_fd = -1, .watch_fd = -1, .status = CRADLE_TRANSPORT_RUNNING};
    cradle_transport_config c = *config;
    if (c.handler == NULL || (c.socket_path == NULL && !c.stdio)) return CRADLE_EINVAL;
    if (c.out_fd == 0) c.out_fd = 1;
    if (c.max_clients == 0) c.max_clients = CRADLE_TRANSPORT_DEFAULT_CLIENTS;
    if (c.line_max == 0) c.line_max = CRADLE_TRANSPORT_LINE_MAX;
    if (c.output_bytes == 0) c.output_bytes = DEFAULT_OUTPUT;
    if (c.reply_reserve == 0) c.reply_reserve = DEFAULT_RESERVE < c.output_bytes ? DEFAULT_RESERVE : c.output_bytes;
    if (c.scratch_bytes == 0) c.scratch_bytes = DEFAULT_SCRATCH;
    if (c.lines_per_poll == 0) c.lines_per_poll = DEFAULT_LINES_PER_POLL;
    if (c.reply_reserve < MIN_RESERVE || c.reply_reserve > c.output_bytes || c.line_max > SIZE_MAX / 4 ||
        c.max_clients > 4096) {
        return CRADLE_EINVAL;
    }
    if (c.socket_path != NULL) {
        size_t n = strlen(c.socket_path);
        if (n == 0 || n >= sizeof t->path) return CRADLE_ETRANSPORT_PATH;
        memcpy(t->path, c.socket_path, n + 1);
        c.socket_path = t->path;
    }
    t->config = c;

    uint32_t count = (c.stdio ? 1u : 0u) + (c.socket_path ? c.max_clients : 0u);
    size_t per_conn = in_capacity(t) + c.output_bytes;
    if (per_conn > SIZE_MAX / count) return CRADLE_ENOMEM;
    t->conns = calloc(count, sizeof *t->conns);
    t->pollfds = calloc(count + 2u, sizeof *t->pollfds); /* + the listener and the watched fd */
    t->poll_owner = calloc(count + 2u, sizeof *t->poll_owner);
    t->scratch_block = malloc(c.scratch_bytes);
    char *block = t->conns ? malloc(per_conn * count) : NULL;
    if (!t->conns || !t->pollfds || !t->poll_owner || !t->scratch_block || !block) {
        free(block);
        free_buffers(t);
        return CRADLE_ENOMEM;
    }
    t->conn_count = count;
    for (uint32_t i = 0; i < count; i++) {
        conn *k = &t->conns[i];
        *k = (conn){.in_fd = -1, .out_fd = -1};
        k->in = block + (size_t)i * per_conn;
        k->out = k->in + in_capacity(t);
    }
    if (c.stdio) {
        t->conns[0].in_fd = c.in_fd;
        t->conns[0].out_fd = c.out_fd;
        t->conns[0].stdio = true;
    }
    cradle_arena_init(&t->scratch, t->scratch_block, c.scratch_bytes);
    if (c.socket_path != NULL) {
        int rc = listen_on(t);
        if (rc != 0) {
            free_buffers(t);
            return rc;
        }
    }
    return 0;
}

/* ---- one connection ---- */

static void close_conn(cradle_transport *t, conn *c) {
    assert(!c->stdio);
    if (c->topics) t->stats.subscribers--;
    close(c->in_fd);
    char *in = c->in, *out = c->out;
    *c = (conn){.in_fd = -1, .out_fd = -1, .in = in, .out = out};
    t->stats.clients--;
}

/* Sends queued replies without blocking (sockets) or with blocking writes
 * (stdio). A failed write marks the peer broken and drops its output. */
static void flush_conn(conn *c) {
    while (c->out_head < c->out_len && !c->broken) {
        size_t left = c->out_len - c->out_head;
        ssize_t n = c->stdio ? write(c->out_fd, c->out + c->out_head, left)
                             : send(c->out_fd, c->out + c->out_head, left, MSG_NOSIGNAL);
        if (n > 0) {
            c->out_head += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!c->stdio) break;
            struct pollfd p = {.fd = c->out_fd, .events = POLLOUT};
            (void)poll(&p, 1, -1);
        } else {
            c->broken = true;
        }
    }
    if (c->out_head == c->out_len || c->broken) c->out_head = c->out_len = 0;
}

/* Makes the free tail of the output queue as large as the queue allows. */
static size_t out_tail(const cradle_transport *t, conn *c) {
    if (c->out_head > 0 && t->config.output_bytes - c->out_len < t->config.reply_reserve) {
        memmove(c->out, c->out + c->out_head, c->out_len - c->out_head);
        c->out_len -= c->out_head;
        c->out_head = 0;
    }
    return t->config.output_bytes - c->out_len;
}

static void reply_too_long(cradle_transport *t, conn *c) {
    char message[96];
    snprintf(message, sizeof message, "line longer than %zu bytes; it was discarded", t->config.line_max);
    cradle_writer w;
    cradle_writer_init(&w, c->out + c->out_len, t->config.output_bytes - c->out_len);
    cradle_dev_reply_error(&w, NULL, CRADLE_EDEV_LINE_LONG, message);
    c->out_len += w.length;
    t->stats.too_long++;
}

static void run_line(cradle_transport *t, conn *c, char *line, size_t length) {
    if (length > 0 && line[length - 1] == '\r') length--;
    line[length] = '\0';
    cradle_writer w;
    cradle_writer_init(&w, c->out + c->out_len, t->config.output_bytes - c->out_len);
    cradle_arena_reset(&t->scratch);
    t->current = (uint32_t)(c - t->conns);
    bool quit = t->config.handler(t->config.context, line, length, &w, &t->scratch);
    t->stats.lines++;
    if (w.overflow) {
        t->stats.overflowed++;
        cradle_writer_init(&w, c->out + c->out_len, t->config.output_bytes - c->out_len);
        cradle_dev_reply_error(&w, NULL, CRADLE_EFULL, "the reply did not fit in the client's output queue");
    }
    c->out_len += w.length;
    if (quit) t->status = CRADLE_TRANSPORT_QUIT;
}

/* Runs the complete lines in the input buffer while the budget and the
 * output queue allow, then compacts the buffer. */
static void process_conn(cradle_transport *t, conn *c) {
    uint32_t budget = t->config.lines_per_poll;
    while (t->status == CRADLE_TRANSPORT_RUNNING && !c->broken) {
        char *base = c->in;
        if (c->discarding) {
            char *nl = memchr(base + c->in_start, '\n', c->in_len - c->in_start);
            c->in_start = nl ? (size_t)(nl - base) + 1 : c->in_len;
            c->scan = c->in_start;
            if (!nl) break;
            c->discarding = false;
            continue;
        }
        char *nl = memchr(base + c->scan, '\n', c->in_len - c->scan);
        size_t length = nl ? (size_t)(nl - base) - c->in_start : c->in_len - c->in_start;
        /* The limit is on the line's own bytes: a CR at the end (so far) may
         * be a CRLF terminator's, which run_line drops, and does not count. */
        size_t own = length > 0 && base[c->in_start + length - 1] == '\r' ? length - 1 : length;
        if (!nl) {
            c->scan = c->in_len;
            bool overlong = own > t->config.line_max;
            bool last = c->stdio && c->read_closed && length > 0;
            if (!overlong && !last) break;
        }
        if (budget == 0) break; /* the next poll does not wait: see has_line */
        if (out_tail(t, c) < t->config.reply_reserve) break; /* back-pressure */
        if (own > t->config.line_max) {
            reply_too_long(t, c);
            c->discarding = nl == NULL;
        } else {
            run_line(t, c, base + c->in_start, length);
        }
        c->in_start = nl ? (size_t)(nl - base) + 1 : c->in_len;
        c->scan = c->in_start;
        budget--;
    }
    if (c->in_start == c->in_len) {
        c->in_start = c->in_len = c->scan = 0;
    } else if (c->in_start > 0) {
        memmove(c->in, c->in + c->in_start, c->in_len - c->in_start);
        c->in_len -= c->in_start;
        c->scan -= c->in_start;
        c->in_start = 0;
    }
}

/* A complete line waits. No newline lies in [in_start, scan), so the search
 * starts at scan. */
static bool has_line(const conn *c) {
    return !c->discarding && memchr(c->in + c->scan, '\n', c->in_len - c->scan) != NULL;
}

/* Lines wait that can run without more input: complete ones, or the stdio
 * input's last unterminated line once the input ended. */
static bool has_work(const conn *c) {
    return has_line(c) || (c->stdio && c->read_closed && c->in_len > 0);
}

static void read_conn(cradle_transport *t, conn *c) {
    size_t room = in_capacity(t) - c->in_len;
    if (room == 0 || c->read_closed) return;
    ssize_t n = read(c->in_fd, c->in + c->in_len, room);
    if (n > 0) {
        c->in_len += (size_t)n;
    } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        c->read_closed = true;
    }
}

static bool wants_read(const cradle_transport *t, const conn *c) {
    return !c->read_closed && !c->broken && c->in_len < in_capacity(t) &&
           out_space(t, c) >= t->config.reply_reserve;
}

/* Closes a socket client that is done; ends the stdio client's run. */
static void finish_conn(cradle_transport *t, conn *c) {
    if (c->stdio) {
        if ((c->broken || (c->read_closed && c->in_len == 0)) && t->status == CRADLE_TRANSPORT_RUNNING) {
            t->status = CRADLE_TRANSPORT_EOF;
        }
        return;
    }
    bool drained = c->out_head == c->out_len;
    if (c->broken || (c->read_closed && drained && (!has_line(c) || c->dropping))) close_conn(t, c);
}

static void refuse_client(cradle_transport *t, int fd) {
    char line[192];
    char message[128];
    snprintf(message, sizeof message, "all %u dev connections are in use (the host's --dev-clients); try again later",
             (unsigned)t->config.max_clients);
    cradle_writer w;
    cradle_writer_init(&w, line, sizeof line);
    cradle_dev_reply_error(&w, NULL, CRADLE_EFULL, message);
    (void)send(fd, line, w.length, MSG_NOSIGNAL);
    close(fd);
    t->stats.refused++;
}

static void accept_clients(cradle_transport *t) {
    uint32_t first = t->config.stdio ? 1u : 0u;
    for (;;) {
        int fd = accept(t->listen_fd, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR) continue;
            return; /* EAGAIN: no more waiting; others (EMFILE...): try next poll */
        }
        struct ucred cred;
        socklen_t cred_size = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_size) != 0 ||
            !(cred.uid == geteuid() || cred.uid == 0 ||
              (t->config.peer_group && cred.gid == (gid_t)t->config.peer_gid))) {
            close(fd); /* no reply: a stranger learns nothing */
            t->stats.denied++;
            continue;
        }
        if (set_flags(fd) != 0) {
            close(fd);
            continue;
        }
        conn *slot = NULL;
        for (uint32_t i = first; i < t->conn_count && !slot; i++) {
            if (!conn_active(&t->conns[i])) slot = &t->conns[i];
        }
        if (!slot) {
            refuse_client(t, fd);
            continue;
        }
        slot->in_fd = slot->out_fd = fd;
        t->stats.accepted++;
        t->stats.clients++;
    }
}

/* Sends every queued reply, waiting for slow sockets at most ms in all. */
static void flush_all(cradle_transport *t, int ms) {
    uint64_t deadline = monotonic_ms() + (uint64_t)ms;
    for (;;) {
        nfds_t n = 0;
        for (uint32_t i = 0; i < t->conn_count; i++) {
            conn *c = &t->conns[i];
            if (!conn_active(c)) continue;
            flush_conn(c);
            if (c->out_head < c->out_len) {
                t->pollfds[n] = (struct pollfd){.fd = c->out_fd, .events = POLLOUT};
                n++;
            }
        }
        uint64_t now = monotonic_ms();
        if (n == 0 || now >= deadline) return;
        (void)poll(t->pollfds, n, (int)(deadline - now));
    }
}

void cradle_transport_watch(cradle_transport *transport, int fd) { transport->watch_fd = fd; }

int cradle_transport_poll(cradle_transport *transport, int timeout_ms) {
    return cradle_transport_poll_ns(transport, timeout_ms < 0 ? -1 : (int64_t)timeout_ms * 1000000);
}

int cradle_transport_poll_ns(cradle_transport *transport, int64_t timeout_ns) {
    cradle_transport *t = transport;
    assert(t->conns != NULL && t->status == CRADLE_TRANSPORT_RUNNING && "transport not open or stopped");
    nfds_t n = 0;
    if (t->listen_fd >= 0) {
        t->pollfds[n] = (struct pollfd){.fd = t->listen_fd, .events = POLLIN};
        t->poll_owner[n++] = OWNER_LISTENER;
    }
    if (t->watch_fd >= 0) {
        t->pollfds[n] = (struct pollfd){.fd = t->watch_fd, .events = POLLIN};
        t->poll_owner[n++] = OWNER_WATCHED;
    }
    for (uint32_t i = 0; i < t->conn_count; i++) {
        conn *c = &t->conns[i];
        if (!conn_active(c)) continue;
        short events = 0;
        if (wants_read(t, c)) events |= POLLIN;
        if (!c->stdio && c->out_head < c->out_len) events |= POLLOUT;
        /* Lines left by the budget or by back-pressure run without waiting. */
        if (has_work(c) && out_space(t, c) >= t->config.reply_reserve) timeout_ns = 0;
        if (events == 0) continue;
        t->pollfds[n] = (struct pollfd){.fd = c->in_fd, .events = events};
        t->poll_owner[n++] = i;
    }
    struct timespec timeout = {.tv_sec = (time_t)(timeout_ns / 1000000000),
                               .tv_nsec = (long)(timeout_ns % 1000000000)};
    int ready = ppoll(t->pollfds, n, timeout_ns < 0 ? NULL : &timeout, NULL);
    if (ready < 0) {
        if (errno == EINTR) return 0;
        t->system_error = errno;
        return CRADLE_EIO;
    }
    for (nfds_t p = 0; p < n && ready > 0; p++) {
        short revents = t->pollfds[p].revents;
        if (revents == 0) continue;
        if (t->poll_owner[p] == OWNER_LISTENER) {
            accept_clients(t);
            continue;
        }
        if (t->poll_owner[p] == OWNER_WATCHED) {
            cradle_drain_wake_fd(t->watch_fd);
            continue;
        }
        conn *c = &t->conns[t->poll_owner[p]];
        if (revents & POLLNVAL) c->read_closed = true;
        else if (revents & (POLLIN | POLLHUP | POLLERR)) read_conn(t, c);
        if (revents & POLLOUT) flush_conn(c);
    }
    for (uint32_t i = 0; i < t->conn_count && t->status == CRADLE_TRANSPORT_RUNNING; i++) {
        conn *c = &t->conns[i];
        if (!conn_active(c)) continue;
        process_conn(t, c);
        flush_conn(c);
        finish_conn(t, c);
    }
    if (t->status == CRADLE_TRANSPORT_QUIT) flush_all(t, CLOSE_FLUSH_MS);
    return 0;
}

/* ---- subscriptions ---- */

uint32_t cradle_transport_current(const cradle_transport *transport) { return transport->current; }

void cradle_transport_subscribe(cradle_transport *transport, uint32_t client, uint64_t topics) {
    assert(client < transport->conn_count && conn_active(&transport->conns[client]));
    conn *c = &transport->conns[client];
    if (c->dropping) return;
    if (!c->topics && topics) transport->stats.subscribers++;
    if (c->topics && !topics) transport->stats.subscribers--;
    c->topics = topics;
}

bool cradle_transport_has_subscribers(const cradle_transport *transport, uint64_t topics) {
    for (uint32_t i = 0; i < transport->conn_count; i++) {
        const conn *c = &transport->conns[i];
        if (conn_active(c) && (c->topics & topics)) return true;
    }
    return false;
}

/* Queues bytes at the end of c's output (the caller checked the room). */
static void queue_bytes(cradle_transport *t, conn *c, const char *bytes, size_t length) {
    (void)out_tail(t, c);
    if (t->config.output_bytes - c->out_len < length) {
        memmove(c->out, c->out + c->out_head, c->out_len - c->out_head);
        c->out_len -= c->out_head;
        c->out_head = 0;
    }
    memcpy(c->out + c->out_len, bytes, length);
    c->out_len += length;
}

/* A subscriber that cannot keep up: its last line says why, its input is
 * no longer read, and it closes once the queue is sent. */
static void drop_subscriber(cradle_transport *t, conn *c) {
    char line[MIN_RESERVE];
    int n = snprintf(line, sizeof line,
                     "{\"event\":\"dropped\",\"reason\":\"slow: the %zu-byte output queue was full\"}\n",
                     t->config.output_bytes);
    if (out_space(t, c) >= (size_t)n) queue_bytes(t, c, line, (size_t)n);
    else c->broken = true; /* replies filled the queue: not even the last line fits */
    c->topics = 0;
    c->dropping = c->read_closed = true;
    c->in_start = c->in_len = c->scan = 0;
    t->stats.subscribers--;
    t->stats.subscribers_dropped++;
}

/* Queues line to one subscriber, or drops it when its queue is full. */
static bool deliver(cradle_transport *t, conn *c, const char *line, size_t length) {
    /* A full queue is sent now, as far as the peer takes it without
     * blocking (the stdio pair writes with blocking calls: its peer is the
     * host's parent): a subscriber that reads keeps up even while a long
     * step command holds the host. */
    if (out_space(t, c) < length + MIN_RESERVE) flush_conn(c);
    if (out_space(t, c) < length + MIN_RESERVE) {
        drop_subscriber(t, c);
        return false;
    }
    queue_bytes(t, c, line, length);
    t->stats.published++;
    return true;
}

static void check_event_line(const cradle_transport *t, const char *line, size_t length) {
    (void)t, (void)line, (void)length;
    assert(length > 0 && line[length - 1] == '\n' && length + MIN_RESERVE <= t->config.output_bytes);
}

uint32_t cradle_transport_publish(cradle_transport *transport, uint64_t topics, const char *line, size_t length) {
    cradle_transport *t = transport;
    check_event_line(t, line, length);
    uint32_t reached = 0;
    for (uint32_t i = 0; i < t->conn_count; i++) {
        conn *c = &t->conns[i];
        if (conn_active(c) && (c->topics & topics) && !c->broken) reached += deliver(t, c, line, length);
    }
    return reached;
}

uint64_t cradle_transport_topics(const cradle_transport *transport, uint32_t client) {
    if (client >= transport->conn_count) return 0;
    const conn *c = &transport->conns[client];
    return conn_active(c) && !c->broken ? c->topics : 0;
}

bool cradle_transport_publish_to(cradle_transport *transport, uint32_t client, const char *line, size_t length) {
    check_event_line(transport, line, length);
    if (cradle_transport_topics(transport, client) == 0) return false;
    return deliver(transport, &transport->conns[client], line, length);
}

cradle_transport_status cradle_transport_state(const cradle_transport *transport) { return transport->status; }

const cradle_transport_stats *cradle_transport_get_stats(const cradle_transport *transport) {
    return &transport->stats;
}

const char *cradle_transport_path(const cradle_transport *transport) {
    return transport->listen_fd >= 0 ? transport->path : NULL;
}

void cradle_transport_listening_event(const cradle_transport *transport, cradle_writer *out) {
    if (transport->listen_fd < 0) return;
    cradle_writer_text(out, "{\"event\":\"listening\",\"path\":");
    cradle_writer_json_string(out, transport->path, strlen(transport->path));
    cradle_writer_text(out, "}\n");
}

void cradle_transport_close(cradle_transport *transport) {
    cradle_transport *t = transport;
    if (t->conns == NULL) return;
    flush_all(t, CLOSE_FLUSH_MS);
    for (uint32_t i = 0; i < t->conn_count; i++) {
        if (conn_active(&t->conns[i]) && !t->conns[i].stdio) close_conn(t, &t->conns[i]);
    }
    if (t->listen_fd >= 0) {
        close(t->listen_fd);
        t->listen_fd = -1;
        /* Remove the file only if it is still ours, not a newer server's. */
        struct stat st;
        if (lstat(t->path, &st) == 0 && (uint64_t)st.st_dev == t->socket_device &&
            (uint64_t)st.st_ino == t->socket_inode) {
            unlink(t->path);
        }
    }
    free_buffers(t);
}
