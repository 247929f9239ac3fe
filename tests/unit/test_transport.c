/* transport over real Unix sockets and pipes, client and server driven from
 * one thread: the server is polled between the client's non-blocking reads
 * and writes, so no test depends on timing. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cradle/cradle.h"


typedef struct fixture {
    char dir[64];
    char path[96];
    cradle_transport transport;
    bool open;
    uint64_t handled;
    bool scratch_was_empty;
} fixture;

/* The test host: status replies with the number of lines handled so far,
 * "big" replies with `size` bytes, quit stops the server. */
static bool handle(void *context, const char *line, size_t length, cradle_writer *reply, cradle_arena *scratch) {
    fixture *f = context;
    if (cradle_arena_remaining(scratch) != scratch->capacity) f->scratch_was_empty = false;
    (void)cradle_arena_alloc(scratch, 100, 8); /* must be gone before the next line */
    assert_int_equal(line[length], '\0');
    f->handled++;
    cradle_dev_request r;
    int rc = cradle_dev_parse(&r, line, length, 1000);
    bool quit = false;
    if (rc == 0) {
        cradle_dev_reply_begin(reply, &r);
        cradle_dev_field_u64(reply, "handled", f->handled);
        cradle_dev_field_u64(reply, "length", length);
        cradle_dev_reply_end(reply);
        quit = cradle_dev_common(&r)->kind == CRADLE_DEV_QUIT;
    } else if (rc == CRADLE_EDEV_UNKNOWN && strcmp(r.cmd, "sub") == 0) {
        int64_t topics = 0;
        assert_int_equal(cradle_dev_arg_integer(&r, "topics", true, 0, 255, 0, &topics), 0);
        cradle_transport_subscribe(&f->transport, cradle_transport_current(&f->transport), (uint64_t)topics);
        cradle_dev_reply_ok(reply, &r);
    } else if (rc == CRADLE_EDEV_UNKNOWN && strcmp(r.cmd, "big") == 0) {
        int64_t size = 0;
        if (cradle_dev_arg_integer(&r, "size", true, 0, 1 << 24, 0, &size) == 0) {
            cradle_dev_reply_begin(reply, &r);
            cradle_writer_text(reply, ",\"pad\":\"");
            for (int64_t i = 0; i < size; i++) cradle_writer_bytes(reply, "x", 1);
            cradle_writer_text(reply, "\"");
            cradle_dev_reply_end(reply);
        } else {
            cradle_dev_reply_parse_error(reply, &r);
        }
    } else {
        cradle_dev_reply_parse_error(reply, &r);
    }
    cradle_dev_request_deinit(&r);
    return quit;
}

static int setup(void **state) {
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/cradle-transport-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/dev.sock", f->dir);
    f->scratch_was_empty = true;
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture *f = *state;
    if (f->open) cradle_transport_close(&f->transport);
    unlink(f->path);
    rmdir(f->dir);
    free(f);
    return 0;
}

static void open_socket(fixture *f, cradle_transport_config config) {
    config.socket_path = f->path;
    config.handler = handle;
    config.context = f;
    assert_int_equal(cradle_transport_open(&f->transport, &config), 0);
    f->open = true;
}

static int connect_client(const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
    return fd;
}

/* A client's side of a conversation: bytes to send and replies received. */
typedef struct client {
    int fd;
    const char *send;
    size_t send_length, sent;
    char *received;
    size_t received_length, received_capacity;
    bool closed; /* the server closed the connection */
} client;

static client client_new(const char *path, const char *send, size_t send_length) {
    client c = {.fd = connect_client(path), .send = send, .send_length = send_length};
    c.received_capacity = 1 << 16;
    c.received = malloc(c.received_capacity);
    assert_non_null(c.received);
    return c;
}

static void client_free(client *c) {
    if (c->fd >= 0) close(c->fd);
    free(c->received);
}

static size_t count_lines(const client *c) {
    size_t n = 0;
    for (size_t i = 0; i < c->received_length; i++) n += c->received[i] == '\n';
    return n;
}

/* Moves bytes both ways without blocking. */
static void client_pump(client *c, bool read) {
    while (c->sent < c->send_length) {
        ssize_t n = send(c->fd, c->send + c->sent, c->send_length - c->sent, MSG_NOSIGNAL);
        if (n <= 0) break;
        c->sent += (size_t)n;
    }
    while (read && !c->closed) {
        if (c->received_length == c->received_capacity) {
            c->received_capacity *= 2;
            c->received = realloc(c->received, c->received_capacity);
            assert_non_null(c->received);
        }
        ssize_t n = recv(c->fd, c->received + c->received_length, c->received_capacity - c->received_length, 0);
        if (n > 0) c->received_length += (size_t)n;
        else if (n == 0) c->closed = true;
        else break;
    }
}

/* Polls the server and the clients until every client holds `lines` reply
 * lines (or was closed), failing after many idle rounds. */
static void converse(fixture *f, client *clients, size_t count, size_t lines) {
    for (int round = 0; round < 200000; round++) {
        bool done = true;
        for (size_t i = 0; i < count; i++) {
            client_pump(&clients[i], true);
            if (count_lines(&clients[i]) < lines && !clients[i].closed) done = false;
        }
        if (done) return;
        if (cradle_transport_state(&f->transport) != CRADLE_TRANSPORT_RUNNING) {
            for (size_t i = 0; i < count; i++) client_pump(&clients[i], true);
            return;
        }
        assert_int_equal(cradle_transport_poll(&f->transport, 5), 0);
    }
    fail_msg("no progress");
}

/* The n-th reply line (from 0) of a client, parsed. */
static json_t *reply_at(const client *c, size_t index) {
    const char *at = c->received, *end = c->received + c->received_length;
    for (size_t i = 0; i < index; i++) {
        at = memchr(at, '\n', (size_t)(end - at));
        assert_non_null(at);
        at++;
    }
    const char *nl = memchr(at, '\n', (size_t)(end - at));
    assert_non_null(nl);
    json_t *j = json_loadb(at, (size_t)(nl - at), 0, NULL);
    assert_non_null(j);
    return j;
}

static bool reply_ok(const json_t *j) { return json_is_true(json_object_get(j, "ok")); }

static const char *reply_string(const json_t *j, const char *name) {
    const char *text = json_string_value(json_object_get(j, name));
    return text ? text : "";
}

static void test_listen_mode_event_and_removal(void **state) {
    fixture *f = *state;
    open_socket(f, (cradle_transport_config){0});
    struct stat st;
    assert_int_equal(lstat(f->path, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_string_equal(cradle_transport_path(&f->transport), f->path);

    char buffer[256];
    cradle_writer w;
    cradle_writer_init(&w, buffer, sizeof buffer);
    cradle_transport_listening_event(&f->transport, &w);
    char want[256];
    snprintf(want, sizeof want, "{\"event\":\"listening\",\"path\":\"%s\"}\n", f->path);
    assert_int_equal(w.length, strlen(want));
    assert_memory_equal(buffer, want, w.length);

    cradle_transport_close(&f->transport);
    f->open = false;
    assert_int_not_equal(lstat(f->path, &st), 0);
}

static void test_three_concurrent_clients(void **state) {
    fixture *f = *state;
    open_socket(f, (cradle_transport_config){0});
    const char *lines[3] = {"{\"cmd\":\"status\",\"id\":\"a\"}\n{\"cmd\":\"status\",\"id\":\"a2\"}\n",
                            "{\"cmd\":\"step\",\"count\":3,\"id\":\"b\"}\n", "{\"cmd\":\"nope\",\"id\":\"c\"}\n"};
    client c[3];
    for (int i = 0; i < 3; i++) c[i] = client_new(f->path, lines[i], strlen(lines[i]));
    converse(f, c, 3, 1);
    converse(f, c, 1, 2);
    const char *ids[3] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++) {
        json_t *j = reply_at(&c[i], 0);
        assert_string_equal(reply_string(j, "id"), ids[i]);
        assert_int_equal(reply_ok(j), i < 2);
        json_decref(j);
    }
    json_t *j = reply_at(&c[0], 1);
    assert_string_equal(reply_string(j, "id"), "a2");
    json_decref(j);
    assert_int_equal(cradle_transport_get_stats(&f->transport)->clients, 3);
    for (int i = 0; i < 3; i++) client_free(&c[i]);
    assert_int_equal(f->handled, 4);
    assert_true(f->scratch_was_empty);
}

static void test_ten_thousand_pipelined_in_order(void **state) {
    fixture *f = *state;
    open_socket(f, (cradle_transport_config){0});
    enum { N = 10000 };
    size_t capacity = (size_t)N * 40, length = 0;
    char *requests = malloc(capacity);
    assert_non_null(requests);
    for (int i = 0; i < N; i++) {
        length += (size_t)snprintf(requests + length, capacity - length, "{\"cmd\":\"status\",\"id\":%d}\n", i);
    }
    client c = client_new(f->path, requests, length);
    converse(f, &c, 1, N);
    assert_int_equal(count_lines(&c), N);
    /* Replies in request order: the ids count up. */
    const char *at = c.received;
    for (int i = 0; i < N; i++) {
        char want[40];
        int n = snprintf(want, sizeof want, "{\"ok\":true,\"id\":%d,", i);
        assert_memory_equal(at, want, (size_t)n);
        at = strchr(at, '\n') + 1;
    }
    client_free(&c);
    free(requests);
}

/* Exactly 1 MiB is a line (not JSON here); 1 MiB + 1 is too long; the line
 * after it runs. Each line ends with ending: the limit counts a line's own
 * bytes, so the CR of a CRLF ending is the terminator's, not the line's (the
 * handler sees the line without it). */
static void check_limit(fixture *f, const char *ending) {
    open_socket(f, (cradle_transport_config){0});
    const size_t max = CRADLE_TRANSPORT_LINE_MAX, end = strlen(ending);
    size_t length = 0, capacity = 2 * max + 200;
    char *data = malloc(capacity);
    assert_non_null(data);
    memset(data, 'x', max);
    length = max;
    memcpy(data + length, ending, end);
    length += end;
    memset(data + length, 'y', max + 1);
    length += max + 1;
    memcpy(data + length, ending, end);
    length += end;
    length += (size_t)snprintf(data + length, capacity - length, "{\"cmd\":\"status\",\"id\":\"after\"}%s", ending);
    client c = client_new(f->path, data, length);
    converse(f, &c, 1, 3);
    json_t *j = reply_at(&c, 0);
    assert_string_equal(reply_string(j, "error"), "not_json");
    json_decref(j);
    j = reply_at(&c, 1);
    assert_string_equal(reply_string(j, "error"), "line_too_long");
    json_decref(j);
    j = reply_at(&c, 2);
    assert_true(reply_ok(j));
    assert_string_equal(reply_string(j, "id"), "after");
    json_decref(j);
    assert_int_equal(cradle_transport_get_stats(&f->transport)->too_long, 1);
    client_free(&c);
    free(data);
}

static void test_overlong_line_then_good_line(void **state) { check_limit(*state, "\n"); }

/* The same with CRLF: exactly 1 MiB ending in CRLF was refused, the same
 * line ending in LF run. */
static void test_crlf_not_counted_in_the_limit(void **state) { check_limit(*state, "\r\n"); }

static void test_line_split_across_writes(void **state) {
    fixture *f = *state;
    open_socket(f, (cradle_transport_config){0});
    const char *line = "{\"cmd\":\"status\",\"id\":\"split\"}\r\n";
    client c = client_new(f->path, line, 0);
    /* One byte per write, the server polled after each. */
    for (size_t i = 0; i < strlen(line); i++) {
        c.send_length = i + 1;
        client_pump(&c, true);
        assert_int_equal(cradle_transport_poll(&f->transport, 0), 0);
        if (i + 1 < strlen(line)) assert_int_equal(f->handled, 0);
    }
    converse(f, &c, 1, 1);
    json_t *j = reply_at(&c, 0);
    assert_string_equal(reply_string(j, "id"), "split");
    /* The '\r' before the newline is not part of the line. */
    assert_int_equal((int)json_integer_value(json_object_get(j, "length")), (int)strlen(line) - 2);
    json_decref(j);
    client_free(&c);
}

static void test_client_vanishing_mid_line(void **state) {
    fixture *f = *state;
    open_socket(f, (cradle_transport_config){0});
    const char *partial = "{\"cmd\":\"status\"}\n{\"cmd\":\"qu";
    client gone = client_new(f->path, partial, strlen(partial));
    converse(f, &gone, 1, 1);
    close(gone.fd);
    gone.fd = -1;
    for (int i = 0; i < 10 && cradle_transport_get_stats(&f->transport)->clients > 0; i++) {
        assert_int_equal(cradle_transport_poll(&f->transport, 5), 0);
    }
    assert_int_equal(cradle_transport_get_stats(&f->transport)->clients, 0);
    assert_int_equal(f->handled, 1);
    assert_int_equal(cradle_transport_state(&f->transport), CRADLE_TRANSPORT_RUNNING);

    /* Requests sent, then gone before the replies: no SIGPIPE, no harm. */
    enum { N = 2000 };
    static char burst[N * 20];
    size_t length = 0;
    for (int i = 0; i < N; i++) length += (size_t)snprintf(burst + length, sizeof burst - length, "{\"cmd\":\"status\"}\n");
    client rude = client_new(f->path, burst, length);
    client_pump(&rude, false);
    assert_int_equal(cradle_transport_poll(&f->transport, 5), 0);
    close(rude.fd);
    rude.fd = -1;
    for (int i = 0; i < 1000 && cradle_transport_get_stats(&f->transport)->clients > 0; i++) {
        assert_int_equal(cradle_transport_poll(&f->transport, 5), 0);
    }
    assert_int_equal(cradle_transport_get_stats(&f->transport)->clients, 0);

    client after = client_new(f->path, "{\"cmd\":\"status\"}\n", 17);
    converse(f, &after, 1, 1);
    assert_int_equal(count_lines(&after), 1);
    client_free(&gone);
    client_free(&rude);
    client_free(&after);
}

static void test_quit_replies_then_stops(void **state) {
    fixture *f = *state;
    open_socket(f, (cradle_transport_config){0});
    const char *lines = "{\"cmd\":\"status\"}\n{\"cmd\":\"quit\",\"id\":1}\n{\"cmd\":\"status\"}\n";
    client c = client_new(f->path, lines, strlen(lines));
    converse(f, &c, 1, 2);
    assert_int_equal(cradle_transport_state(&f->transport), CRADLE_TRANSPORT_QUIT);
    assert_int_equal(count_lines(&c), 2);
    json_t *j = reply_at(&c, 1);
    assert_true(reply_ok(j));
    assert_int_equal((int)json_integer_value(json_object_get(j, "id")), 1);
    json_decref(j);
    assert_int_equal(f->handled, 2); /* the line after quit is not run */
    cradle_transport_close(&f->transport);
    f->open = false;
    client_pump(&c, true);
    assert_true(c.closed);
    client_free(&c);
}

static void test_socket_file_rules(void **state) {
    fixture *f = *state;
    cradle_transport_config config = {.socket_path = f->path, .handler = handle, .context = f};
    cradle_transport other;

    /* A stale socket (its server gone) is replaced. */
    int dead = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", f->path);
    assert_int_equal(bind(dead, (struct sockaddr *)&a, sizeof a), 0);
    close(dead);
    open_socket(f, (cradle_transport_config){0});

    /* A live one is refused, and the first server keeps working. */
    assert_int_equal(cradle_transport_open(&other, &config), CRADLE_ETRANSPORT_LIVE);
    client c = client_new(f->path, "{\"cmd\":\"status\"}\n", 17);
    converse(f, &c, 1, 1);
    assert_int_equal(count_lines(&c), 1);
    client_free(&c);
    cradle_transport_close(&f->transport);
    f->open = false;

    /* A regular file is not ours to replace. */
    FILE *file = fopen(f->path, "w");
    assert_non_null(file);
    fclose(file);
    assert_int_equal(cradle_transport_open(&other, &config), CRADLE_ETRANSPORT_FOREIGN);
    unlink(f->path);

    char long_path[200];
    memset(long_path, 'p', sizeof long_path - 1);
    long_path[sizeof long_path - 1] = '\0';
    config.socket_path = long_path;
    assert_int_equal(cradle_transport_open(&other, &config), CRADLE_ETRANSPORT_PATH);
    config.socket_path = "";
    assert_int_equal(cradle_transport_open(&other, &config), CRADLE_ETRANSPORT_PATH);
    config.socket_path = NULL;
    assert_int_equal(cradle_transport_open(&other, &config), CRADLE_EINVAL);
}

/* The socket's directory: a missing one is created 0700; a group- or
 * world-writable one without the sticky bit, or a symlink at the socket
 * path, is refused; a sticky world-writable one (like /tmp) is accepted. */
static void test_directory_and_symlink_rules(void **state) {
    fixture *f = *state;
    cradle_transport other;
    char sub[300], path[400];
    snprintf(sub, sizeof sub, "%s/run", f->dir);
    snprintf(path, sizeof path, "%s/dev.sock", sub);
    cradle_transport_config config = {.socket_path = path, .handler = handle, .context = f};
    assert_int_equal(cradle_transport_open(&other, &config), 0);
    struct stat st;
    assert_int_equal(stat(sub, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(lstat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    cradle_transport_close(&other);
    assert_int_equal(chmod(sub, 0777), 0);
    assert_int_equal(cradle_transport_open(&other, &config), CRADLE_ETRANSPORT_DIR);
    assert_int_equal(chmod(sub, 0720), 0);
    assert_int_equal(cradle_transport_open(&other, &config), CRADLE_ETRANSPORT_DIR);
    assert_int_equal(chmod(sub, 01777), 0); /* sticky: only the owner may replace the socket */
    assert_int_equal(cradle_transport_open(&other, &config), 0);
    assert_int_equal(lstat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    cradle_transport_close(&other);
    assert_int_equal(chmod(sub, 0700), 0);
    assert_int_equal(rmdir(sub), 0);

    /* A symlink at the socket path, even to a socket, is not ours. */
    open_socket(f, (cradle_transport_config){0});
    snprintf(path, sizeof path, "%s/link.sock", f->dir);
    assert_int_equal(symlink(f->path, path), 0);
    config.socket_path = path;
    assert_int_equal(cradle_transport_open(&other, &config), CRADLE_ETRANSPORT_FOREIGN);
    unlink(path);
}

/* Runs a client as uid/gid 65534 against the fixture's open socket and
 * returns its exit status: 0 no reply (closed), 20 a reply arrived. */
static int other_user_client(fixture *f) {
    /* Let the other user reach the socket, so the credential check is what
     * decides (not the file permissions). */
    assert_int_equal(chmod(f->dir, 0711), 0);
    assert_int_equal(chmod(f->path, 0666), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0) _exit(10);
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        snprintf(a.sun_path, sizeof a.sun_path, "%s", f->path);
        if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) _exit(11);
        const char line[] = "{\"cmd\":\"status\"}\n";
        (void)!send(fd, line, sizeof line - 1, MSG_NOSIGNAL); /* may already be closed */
        char reply[256];
        ssize_t n = read(fd, reply, sizeof reply); /* EOF (or reset): no reply */
        _exit(n <= 0 ? 0 : 20);
    }
    int status = -1;
    for (int i = 0; i < 3000 && status == -1; i++) { /* valgrind makes the child slow */
        assert_true(cradle_transport_poll(&f->transport, 10) >= 0);
        if (waitpid(child, &status, WNOHANG) != child) status = -1;
    }
    if (status == -1) {
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
    }
    assert_int_equal(chmod(f->dir, 0700), 0);
    if (!WIFEXITED(status)) fprintf(stderr, "child status %d\n", status);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

/* SO_PEERCRED: a client of another uid is closed without a reply (needs
 * root to switch uid; skipped otherwise). */
static void test_other_uid_refused(void **state) {
    fixture *f = *state;
    if (geteuid() != 0) {
        skip();
        return;
    }
    open_socket(f, (cradle_transport_config){0});
    assert_int_equal(other_user_client(f), 0);
    const cradle_transport_stats *stats = cradle_transport_get_stats(&f->transport);
    assert_int_equal(stats->denied, 1);
    assert_int_equal(stats->accepted, 0);
    assert_int_equal(stats->lines, 0);
    /* This user is still served. */
    client c = client_new(f->path, "{\"cmd\":\"status\"}\n", 17);
    converse(f, &c, 1, 1);
    assert_int_equal(count_lines(&c), 1);
    client_free(&c);
}

/* peer_group: a member of the configured group is admitted (root only). */
static void test_peer_group_admitted(void **state) {
    fixture *f = *state;
    if (geteuid() != 0) {
        skip();
        return;
    }
    open_socket(f, (cradle_transport_config){.peer_group = true, .peer_gid = 65534});
    struct stat st;
    assert_int_equal(lstat(f->path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0660);
    assert_int_equal(st.st_gid, 65534);
    assert_int_equal(other_user_client(f), 20);
    assert_int_equal(cradle_transport_get_stats(&f->transport)->denied, 0);
}

static void test_client_limit(void **state) {
    fixture *f = *state;
    open_socket(f, (cradle_transport_config){.max_clients = 2});
    client c[3];
    for (int i = 0; i < 3; i++) c[i] = client_new(f->path, "{\"cmd\":\"status\"}\n", 17);
    converse(f, c, 3, 1);
    for (int i = 0; i < 2; i++) {
        json_t *j = reply_at(&c[i], 0);
        assert_true(reply_ok(j));
        json_decref(j);
    }
    json_t *j = reply_at(&c[2], 0);
    assert_string_equal(reply_string(j, "error"), "full");
    json_decref(j);
    client_pump(&c[2], true);
    assert_true(c[2].closed);
    assert_int_equal(cradle_transport_get_stats(&f->transport)->refused, 1);
    for (int i = 0; i < 3; i++) client_free(&c[i]);
}

static void test_slow_reader_stalls_only_itself(void **state) {
    fixture *f = *state;
    open_socket(f, (cradle_transport_config){.output_bytes = 4096, .reply_reserve = 1024});
    /* A client that sends many requests and never reads: its replies fill
     * the kernel buffer and its queue, then the server stops serving it. */
    enum { N = 20000 };
    static char flood[N * 20];
    size_t length = 0;
    for (int i = 0; i < N; i++) length += (size_t)snprintf(flood + length, sizeof flood - length, "{\"cmd\":\"status\"}\n");
    client slow = client_new(f->path, flood, length);
    for (int i = 0; i < 200; i++) {
        client_pump(&slow, false);
        assert_int_equal(cradle_transport_poll(&f->transport, 0), 0);
    }
    uint64_t stalled_at = f->handled;
    assert_true(stalled_at < N);
    /* Another client is still served at once. */
    const char *q = "{\"cmd\":\"status\",\"id\":\"q\"}\n";
    client quick = client_new(f->path, q, strlen(q));
    converse(f, &quick, 1, 1);
    json_t *j = reply_at(&quick, 0);
    assert_string_equal(reply_string(j, "id"), "q");
    json_decref(j);
    /* A reply larger than the queue is replaced by an error line. */
    const char *bigs = "{\"cmd\":\"big\",\"size\":10000}\n{\"cmd\":\"big\",\"size\":10}\n";
    client big = client_new(f->path, bigs, strlen(bigs));
    converse(f, &big, 1, 2);
    j = reply_at(&big, 0);
    assert_string_equal(reply_string(j, "error"), "full");
    json_decref(j);
    j = reply_at(&big, 1);
    assert_true(reply_ok(j));
    json_decref(j);
    /* Once the slow client reads, it gets every reply in order. */
    converse(f, &slow, 1, N);
    assert_int_equal(count_lines(&slow), N);
    client_free(&slow);
    client_free(&quick);
    client_free(&big);
}

/* The index (from 0) of client c's line equal to text, or -1. */
static long line_index(const client *c, const char *text) {
    long index = 0;
    const char *at = c->received, *end = c->received + c->received_length;
    while (at < end) {
        const char *nl = memchr(at, '\n', (size_t)(end - at));
        if (!nl) break;
        if ((size_t)(nl - at) == strlen(text) && memcmp(at, text, strlen(text)) == 0) return index;
        index++;
        at = nl + 1;
    }
    return -1;
}

static void test_subscribers_get_their_topics_in_order(void **state) {
    fixture *f = *state;
    open_socket(f, (cradle_transport_config){0});
    const char *sub1 = "{\"cmd\":\"sub\",\"topics\":1}\n", *sub2 = "{\"cmd\":\"sub\",\"topics\":2}\n";
    const char *status = "{\"cmd\":\"status\"}\n";
    client c[3] = {client_new(f->path, sub1, strlen(sub1)), client_new(f->path, sub2, strlen(sub2)),
                   client_new(f->path, status, strlen(status))};
    converse(f, c, 3, 1);
    assert_int_equal(cradle_transport_get_stats(&f->transport)->subscribers, 2);
    assert_true(cradle_transport_has_subscribers(&f->transport, 1));
    assert_false(cradle_transport_has_subscribers(&f->transport, 4));
    assert_int_equal(cradle_transport_publish(&f->transport, 1, "{\"event\":\"e1\"}\n", 15), 1);
    assert_int_equal(cradle_transport_publish(&f->transport, 2, "{\"event\":\"e2\"}\n", 15), 1);
    assert_int_equal(cradle_transport_publish(&f->transport, 3, "{\"event\":\"e3\"}\n", 15), 2);
    assert_int_equal(cradle_transport_publish(&f->transport, 4, "{\"event\":\"e4\"}\n", 15), 0);
    converse(f, c, 2, 3);
    assert_int_equal(line_index(&c[0], "{\"event\":\"e1\"}"), 1);
    assert_int_equal(line_index(&c[0], "{\"event\":\"e3\"}"), 2);
    assert_int_equal(line_index(&c[0], "{\"event\":\"e2\"}"), -1);
    assert_int_equal(line_index(&c[1], "{\"event\":\"e2\"}"), 1);
    assert_int_equal(line_index(&c[1], "{\"event\":\"e3\"}"), 2);
    client_pump(&c[2], true);
    assert_int_equal(count_lines(&c[2]), 1); /* not a subscriber: its reply only */
    /* One subscriber's own line, and an unsubscribe. */
    uint32_t second = UINT32_MAX;
    for (uint32_t i = 0; i < cradle_transport_capacity(&f->transport); i++)
        if (cradle_transport_topics(&f->transport, i) == 2) second = i;
    assert_true(second != UINT32_MAX);
    assert_true(cradle_transport_publish_to(&f->transport, second, "{\"event\":\"own\"}\n", 16));
    const char *unsub = "{\"cmd\":\"sub\",\"topics\":0}\n";
    c[0].send = unsub;
    c[0].send_length = strlen(unsub);
    c[0].sent = 0;
    converse(f, c, 2, 4);
    assert_int_equal(line_index(&c[1], "{\"event\":\"own\"}"), 3);
    assert_false(cradle_transport_has_subscribers(&f->transport, 1));
    assert_int_equal(cradle_transport_get_stats(&f->transport)->subscribers, 1);
    /* A subscriber that disconnects is no longer one. */
    client_free(&c[1]);
    for (int i = 0; i < 1000 && cradle_transport_get_stats(&f->transport)->subscribers; i++)
        assert_int_equal(cradle_transport_poll(&f->transport, 5), 0);
    assert_int_equal(cradle_transport_get_stats(&f->transport)->subscribers, 0);
    assert_int_equal(cradle_transport_publish(&f->transport, 2, "{\"event\":\"e5\"}\n", 15), 0);
    client_free(&c[0]);
    client_free(&c[2]);
}

static void test_slow_subscriber_is_dropped_alone(void **state) {
    fixture *f = *state;
    open_socket(f, (cradle_transport_config){.output_bytes = 8192, .reply_reserve = 1024});
    const char *sub = "{\"cmd\":\"sub\",\"topics\":1}\n";
    client slow = client_new(f->path, sub, strlen(sub));
    client quick = client_new(f->path, sub, strlen(sub));
    int small = 4096;
    setsockopt(slow.fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    converse(f, &slow, 1, 1);
    converse(f, &quick, 1, 1);
    char line[128];
    int n = snprintf(line, sizeof line, "{\"event\":\"tick\",\"pad\":\"%080d\"}\n", 0);
    enum { LINES = 20000 };
    for (int i = 0; i < LINES; i++) {
        (void)cradle_transport_publish(&f->transport, 1, line, (size_t)n);
        client_pump(&quick, true); /* the quick one reads as the lines come */
    }
    const cradle_transport_stats *st = cradle_transport_get_stats(&f->transport);
    assert_int_equal(st->subscribers_dropped, 1);
    assert_int_equal(st->subscribers, 1);
    converse(f, &quick, 1, 1 + LINES);
    assert_int_equal(count_lines(&quick), 1 + LINES);
    /* The slow one gets what was queued, then the dropped line, then EOF. */
    for (int i = 0; i < 20000 && !slow.closed; i++) {
        client_pump(&slow, true);
        assert_int_equal(cradle_transport_poll(&f->transport, 1), 0);
    }
    assert_true(slow.closed);
    assert_true(slow.received_length > 0);
    const char *last = slow.received + slow.received_length - 1;
    while (last > slow.received && last[-1] != '\n') last--;
    assert_memory_equal(last, "{\"event\":\"dropped\",\"reason\":\"slow: the 8192-byte output queue was full\"}\n",
                        strlen("{\"event\":\"dropped\",\"reason\":\"slow: the 8192-byte output queue was full\"}\n"));
    assert_true(count_lines(&slow) < 1 + LINES);
    client_free(&slow);
    client_free(&quick);
}

static void test_stdio_over_pipes(void **state) {
    fixture *f = *state;
    int to_server[2], from_server[2];
    assert_int_equal(pipe(to_server), 0);
    assert_int_equal(pipe(from_server), 0);
    cradle_transport_config config = {
        .stdio = true, .in_fd = to_server[0], .out_fd = from_server[1], .handler = handle, .context = f};
    assert_int_equal(cradle_transport_open(&f->transport, &config), 0);
    f->open = true;
    assert_null(cradle_transport_path(&f->transport));
    const char *lines = "{\"cmd\":\"status\",\"id\":1}\n{\"cmd\":\"step\"";
    assert_int_equal(write(to_server[1], lines, strlen(lines)), (ssize_t)strlen(lines));
    assert_int_equal(cradle_transport_poll(&f->transport, 100), 0);
    assert_int_equal(f->handled, 1);
    /* The last line has no newline: it runs at end of input. */
    assert_int_equal(write(to_server[1], ",\"count\":2}", 11), 11);
    close(to_server[1]);
    for (int i = 0; i < 10 && cradle_transport_state(&f->transport) == CRADLE_TRANSPORT_RUNNING; i++) {
        assert_int_equal(cradle_transport_poll(&f->transport, 100), 0);
    }
    assert_int_equal(cradle_transport_state(&f->transport), CRADLE_TRANSPORT_EOF);
    assert_int_equal(f->handled, 2);
    char replies[512];
    ssize_t n = read(from_server[0], replies, sizeof replies - 1);
    assert_true(n > 0);
    replies[n] = '\0';
    assert_non_null(strstr(replies, "{\"ok\":true,\"id\":1,\"handled\":1,"));
    assert_non_null(strstr(replies, "\n{\"ok\":true,\"handled\":2,"));
    cradle_transport_close(&f->transport);
    f->open = false;
    close(to_server[0]);
    close(from_server[0]);
    close(from_server[1]);
}

/* With a budget of two lines per poll, every line still runs, the last
 * unterminated one included, before end of input is reported. */
static void test_stdio_budget_and_last_line(void **state) {
    fixture *f = *state;
    int to_server[2], from_server[2];
    assert_int_equal(pipe(to_server), 0);
    assert_int_equal(pipe(from_server), 0);
    cradle_transport_config config = {.stdio = true, .in_fd = to_server[0], .out_fd = from_server[1],
                                      .handler = handle, .context = f, .lines_per_poll = 2};
    assert_int_equal(cradle_transport_open(&f->transport, &config), 0);
    f->open = true;
    const char *lines = "{\"cmd\":\"status\"}\n{\"cmd\":\"status\"}\n{\"cmd\":\"status\"}\n{\"cmd\":\"status\"}\n"
                        "{\"cmd\":\"status\"}\n{\"cmd\":\"status\"}";
    assert_int_equal(write(to_server[1], lines, strlen(lines)), (ssize_t)strlen(lines));
    close(to_server[1]);
    for (int i = 0; i < 20 && cradle_transport_state(&f->transport) == CRADLE_TRANSPORT_RUNNING; i++) {
        assert_int_equal(cradle_transport_poll(&f->transport, 100), 0);
    }
    assert_int_equal(cradle_transport_state(&f->transport), CRADLE_TRANSPORT_EOF);
    assert_int_equal(f->handled, 6);
    cradle_transport_close(&f->transport);
    f->open = false;
    close(to_server[0]);
    close(from_server[0]);
    close(from_server[1]);
}

/* A watched wake-up pipe ends the wait and is read dry; the wait in
 * nanoseconds lasts its whole time when nothing happens; an unwatched pipe
 * is left alone. */
static void test_watched_fd_wakes_and_is_drained(void **state) {
    fixture *f = *state;
    open_socket(f, (cradle_transport_config){0});
    int wake[2];
    assert_int_equal(pipe(wake), 0);
    assert_int_equal(fcntl(wake[0], F_SETFL, O_NONBLOCK), 0);
    cradle_transport_watch(&f->transport, wake[0]);
    char bytes[100] = {0};
    assert_int_equal(write(wake[1], bytes, sizeof bytes), (ssize_t)sizeof bytes);
    /* Thirty seconds unless the pipe wakes it; the pipe is then empty. */
    assert_int_equal(cradle_transport_poll_ns(&f->transport, 30 * INT64_C(1000000000)), 0);
    char c;
    assert_int_equal(read(wake[0], &c, 1), -1);
    assert_int_equal(errno, EAGAIN);
    assert_int_equal(f->handled, 0);

    uint64_t t0 = cradle_mono_ns();
    assert_int_equal(cradle_transport_poll_ns(&f->transport, 20000000), 0);
    assert_true(cradle_mono_ns() - t0 >= 20000000u);

    cradle_transport_watch(&f->transport, -1);
    assert_int_equal(write(wake[1], "x", 1), 1);
    assert_int_equal(cradle_transport_poll_ns(&f->transport, 0), 0);
    assert_int_equal(read(wake[0], &c, 1), 1);
    close(wake[0]);
    close(wake[1]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_listen_mode_event_and_removal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_three_concurrent_clients, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ten_thousand_pipelined_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overlong_line_then_good_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crlf_not_counted_in_the_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_line_split_across_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_client_vanishing_mid_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quit_replies_then_stops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_socket_file_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_client_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_directory_and_symlink_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_uid_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_peer_group_admitted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_reader_stalls_only_itself, setup, teardown),
        cmocka_unit_test_setup_teardown(test_subscribers_get_their_topics_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_subscriber_is_dropped_alone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stdio_over_pipes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stdio_budget_and_last_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watched_fd_wakes_and_is_drained, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
