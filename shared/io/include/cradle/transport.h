#ifndef CRADLE_TRANSPORT_H
#define CRADLE_TRANSPORT_H
/*
 * transport: a line server for the dev protocol, over a Unix socket, over a
 * pair of file descriptors (stdin/stdout), or both at once (seed 001).
 *
 * The host drives it from its own loop: cradle_transport_poll() waits at most
 * timeout_ms for input, then hands each complete line to the handler with a
 * writer for its reply and a scratch arena that is reset before every line.
 * When the handler returns true (quit) the server stops taking lines,
 * flushes the replies it holds (waiting at most a second) and reports
 * CRADLE_TRANSPORT_QUIT.
 *
 * Lines end with '\n' (a '\r' before it is dropped); the handler sees the
 * line NUL-terminated in place of the newline. A line holds at most
 * line_max bytes (1 MiB): a longer one gets a line_too_long error reply, the
 * rest of it up to the newline is discarded and the next line works.
 *
 * Socket clients: up to max_clients at once (16; one more is sent an error
 * line naming the limit and closed), all non-blocking; each has its own input buffer and a
 * bounded output queue, and lines split across reads and many lines per read
 * (pipelining) both work, replies in request order. Back-pressure: while a
 * client's output queue has less than reply_reserve bytes free, the server
 * neither runs that client's lines nor reads from it, so a client that does
 * not read its replies stalls only itself, never the host or other clients.
 * A reply larger than the free space is replaced by a "full" error line. A
 * client that disconnects mid-line loses that partial line and nothing else;
 * writes use MSG_NOSIGNAL, so a vanished client never raises SIGPIPE.
 *
 * The stdio pair: the input is read when poll says it is readable; replies
 * are written with blocking write() calls (the other end is the host's
 * parent, which reads them). A program serving stdio should ignore SIGPIPE.
 * At the end of the input the last unterminated line, if any, is handled and
 * the transport reports CRADLE_TRANSPORT_EOF.
 *
 * The socket file is created mode 0600 (0660 with peer_group) in a directory
 * where nobody else can replace it: a missing last directory is created
 * 0700; one that is not a directory, is owned by another user (root
 * excepted) or is writable by group or others without the sticky bit is
 * refused (CRADLE_ETRANSPORT_DIR), since whoever can write it can replace
 * the socket. A sticky directory such as /tmp is accepted: there only an
 * entry's owner, the directory's owner and root may remove or rename it. Each accepted client's
 * credentials (SO_PEERCRED) must name this process's effective user, root,
 * or with peer_group the group peer_gid; anyone else is closed at once and
 * counted in stats.denied. A live socket already at the path (one that
 * accepts a connection) is refused, a stale one of ours is replaced, and
 * anything else at the path (a symlink, a file, another user's socket) is
 * refused. cradle_transport_close removes the
 * file if it is still the one this transport created.
 *
 * Subscriptions: a handler may make the client whose line it runs
 * (cradle_transport_current) a subscriber of a set of topics (bits of a
 * mask the host defines). cradle_transport_publish queues an event line to
 * every subscriber of its topics, interleaved with that client's replies in
 * order. Publishing never blocks on a socket client: a full queue is first
 * sent as far as the socket takes it at once, and a subscriber whose queue
 * still cannot take the line is sent
 *   {"event":"dropped","reason":"slow: the N-byte output queue was full"}
 * instead, its input is no longer read and it is closed once that line is
 * sent; other clients and the host go on. The stdio client's queue is
 * flushed with blocking writes instead (its reader is the host's parent).
 *
 * Memory: open allocates every buffer (about 1.3 MiB per client with the
 * defaults) and close frees them; polling allocates nothing. Not thread-safe:
 * one thread opens, polls and closes. The library prints nothing; a program
 * prints the listening event with cradle_transport_listening_event().
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/arena.h"
#include "cradle/dev.h"
#include "cradle/errors.h"

#define CRADLE_TRANSPORT_LINE_MAX ((size_t)1 << 20)
#define CRADLE_TRANSPORT_DEFAULT_CLIENTS 16u

/* Handles one line (length bytes; line[length] == '\0'). Writes exactly one
 * reply line into reply; scratch is empty on entry and reset after. Returns
 * true to stop the server. */
typedef bool (*cradle_transport_handler)(void *context, const char *line, size_t length,
                                         cradle_writer *reply, cradle_arena *scratch);

/* Zero means default everywhere. */
typedef struct cradle_transport_config {
    const char *socket_path;   /* listen on this Unix socket; NULL for none */
    bool stdio;                /* also serve in_fd / out_fd as one client */
    int in_fd;                 /* default 0 (stdin) */
    int out_fd;                /* 0 means 1 (stdout) */
    cradle_transport_handler handler; /* required */
    void *context;             /* passed to handler */
    uint32_t max_clients;      /* default 16 socket clients */
    size_t line_max;           /* default CRADLE_TRANSPORT_LINE_MAX */
    size_t output_bytes;       /* per-client output queue, default 256 KiB */
    size_t reply_reserve;      /* free output needed to run a line, default 64 KiB */
    size_t scratch_bytes;      /* the per-line arena, default 64 KiB */
    uint32_t lines_per_poll;   /* per client per poll call, default 256 */
    bool peer_group;           /* also admit clients whose group is peer_gid */
    uint32_t peer_gid;
} cradle_transport_config;

typedef enum cradle_transport_status {
    CRADLE_TRANSPORT_RUNNING,
    CRADLE_TRANSPORT_QUIT, /* the handler asked to stop */
    CRADLE_TRANSPORT_EOF,  /* the stdio input ended (or its output broke) */
} cradle_transport_status;

typedef struct cradle_transport_stats {
    uint64_t lines;        /* lines handed to the handler */
    uint64_t too_long;     /* lines refused as longer than line_max */
    uint64_t accepted;     /* socket clients accepted */
    uint64_t refused;      /* socket clients refused: all slots taken */
    uint64_t overflowed;   /* replies replaced because they did not fit */
    uint64_t clients;      /* socket clients connected now */
    uint64_t denied;       /* socket clients refused by the credential check */
    uint64_t subscribers;  /* clients subscribed now */
    uint64_t published;    /* event lines queued to subscribers */
    uint64_t subscribers_dropped; /* subscribers closed for falling behind */
} cradle_transport_stats;

struct cradle__transport_conn;
struct pollfd;

/* Caller-owned; the fields are private (read them through the functions). */
typedef struct cradle_transport {
    cradle_transport_config config; /* with defaults filled in */
    cradle_transport_status status;
    cradle_transport_stats stats;
    int listen_fd;                  /* -1 without a socket */
    int watch_fd;                   /* cradle_transport_watch; -1 for none */
    uint64_t socket_device, socket_inode; /* identify our socket file at close */
    char path[108];
    struct cradle__transport_conn *conns; /* stdio first when enabled, then socket slots */
    uint32_t conn_count;
    struct pollfd *pollfds;
    uint32_t *poll_owner;
    void *scratch_block;
    cradle_arena scratch;
    int system_error; /* errno behind the last CRADLE_EIO, for messages */
    uint32_t current; /* the connection whose line the handler runs */
} cradle_transport;

/* Allocates the buffers, then binds and listens on config->socket_path (if
 * any). Returns 0, CRADLE_EINVAL (no handler, nothing to serve),
 * CRADLE_ENOMEM, CRADLE_ETRANSPORT_PATH (empty or longer than 107 bytes),
 * CRADLE_ETRANSPORT_LIVE (a server answers at the path),
 * CRADLE_ETRANSPORT_FOREIGN (the path holds something that is not a socket),
 * or CRADLE_EIO (transport->system_error holds errno). On error nothing is
 * left open or allocated and close need not be called. */
CRADLE_MUST_CHECK int cradle_transport_open(cradle_transport *transport,
                                            const cradle_transport_config *config);

/* Waits up to timeout_ms (0: do not wait, -1: until input) for input, accepts
 * clients, runs complete lines and sends replies. Returns 0 (also when a
 * signal interrupted the wait) or CRADLE_EIO. Asserts the transport is
 * running. */
CRADLE_MUST_CHECK int cradle_transport_poll(cradle_transport *transport, int timeout_ms);

/* As cradle_transport_poll, with the wait in nanoseconds (negative: until
 * input), so a host can sleep exactly until its next deadline. */
CRADLE_MUST_CHECK int cradle_transport_poll_ns(cradle_transport *transport, int64_t timeout_ns);

/* Makes the polls also return when fd (non-blocking; -1: none) is readable,
 * and read it dry: a wake-up pipe that another thread writes to, so one
 * wait covers the dev clients and that thread's news. */
void cradle_transport_watch(cradle_transport *transport, int fd);

/* Inside a handler: the client whose line runs (for subscribe). */
uint32_t cradle_transport_current(const cradle_transport *transport);

/* Makes client a subscriber of topics (0: no longer one). A client being
 * dropped stays dropped. */
void cradle_transport_subscribe(cradle_transport *transport, uint32_t client, uint64_t topics);

/* True when some client subscribes to one of topics: a host skips
 * formatting an event nobody reads. */
bool cradle_transport_has_subscribers(const cradle_transport *transport, uint64_t topics);

/* Queues line (length bytes ending with '\n', at most the output queue less
 * 256 bytes) to every subscriber of one of topics; a slow one is dropped
 * (above). Returns how many subscribers it reached. Never blocks on a
 * socket. */
uint32_t cradle_transport_publish(cradle_transport *transport, uint64_t topics, const char *line, size_t length);

/* The topics client subscribes to now (0: none, or no such client). */
uint64_t cradle_transport_topics(const cradle_transport *transport, uint32_t client);

/* As publish, to one subscriber only (an event it alone asked for, such as
 * a step line at its own interval). False when client subscribes to
 * nothing or was dropped now. */
bool cradle_transport_publish_to(cradle_transport *transport, uint32_t client, const char *line, size_t length);

/* The most clients a transport holds (the stdio pair and the socket slots):
 * client numbers are below it. */
static inline uint32_t cradle_transport_capacity(const cradle_transport *transport) {
    return transport->conn_count;
}

cradle_transport_status cradle_transport_state(const cradle_transport *transport);
const cradle_transport_stats *cradle_transport_get_stats(const cradle_transport *transport);

/* The socket path, or NULL without a socket. */
const char *cradle_transport_path(const cradle_transport *transport);

/* Writes {"event":"listening","path":"<path>"} and a newline (nothing without
 * a socket) for the program to print once open succeeded. */
void cradle_transport_listening_event(const cradle_transport *transport, cradle_writer *out);

/* Sends what replies remain (waiting at most a second), closes every
 * descriptor it opened (not the stdio pair), removes its socket file and
 * frees its buffers. */
void cradle_transport_close(cradle_transport *transport);

#endif
