/*
 * ctl_print: how cradlectl shows what a host sends (ctl.h): a reply as one
 * "ok  key=value ..." line (pipes and scripts), as a readable block with
 * tables (a terminal), or as its raw JSON line (--json); and event lines.
 * Text from the host is printed with control characters as '?', so a reply
 * cannot drive the terminal.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ctl.h"

/* ---- values ---- */

static void print_clean(FILE *to, const char *text) {
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, to);
}

static void print_value(FILE *to, const json_t *item) {
    if (json_is_string(item)) {
        print_clean(to, json_string_value(item));
    } else if (json_is_integer(item)) {
        fprintf(to, "%" JSON_INTEGER_FORMAT, json_integer_value(item));
    } else if (json_is_real(item)) {
        double d = json_real_value(item);
        if (d > -9007199254740992.0 && d < 9007199254740992.0 && d == (double)(int64_t)d) {
            fprintf(to, "%" PRId64, (int64_t)d);
        } else {
            char text[40];
            snprintf(text, sizeof text, "%.15g", d); /* the shortest that reads back */
            if (strtod(text, NULL) != d) snprintf(text, sizeof text, "%.17g", d);
            fputs(text, to);
        }
    } else {
        char *text = json_dumps(item, JSON_COMPACT | JSON_ENCODE_ANY);
        print_clean(to, text ? text : "?");
        free(text);
    }
}

/* Parses one line the host sent. Integers beyond 2^63 (a u64 counter or
 * seed) do not fit jansson's integers: such a line is read again with every
 * number as a double. NULL when it is not JSON at all. */
json_t *ctl_parse_line(const char *line, size_t length) {
    json_t *root = json_loadb(line, length, JSON_ALLOW_NUL, NULL);
    if (!root) root = json_loadb(line, length, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, NULL);
    return root;
}

/* ---- the one-line form ---- */

static void print_line_form(json_t *root) {
    const char *key;
    json_t *item;
    fputs("ok ", stdout);
    json_object_foreach(root, key, item) {
        if (!strcmp(key, "ok")) continue;
        printf(" %s=", key);
        print_value(stdout, item);
    }
    putchar('\n');
}

static void print_error(const json_t *root) {
    const char *error = json_string_value(json_object_get(root, "error"));
    const char *message = json_string_value(json_object_get(root, "message"));
    const json_t *id = json_object_get(root, "id");
    fputs("error  ", stdout);
    print_clean(stdout, error ? error : "?");
    if (message) {
        fputs(": ", stdout);
        print_clean(stdout, message);
    }
    if (id) {
        fputs("  id=", stdout);
        print_value(stdout, id);
    }
    putchar('\n');
}

/* ---- the readable form ---- */

/* An array of objects as a table: one column per key of the first row. */
static void print_table(const char *indent, json_t *rows) {
    json_t *first = json_array_get(rows, 0);
    if (!json_is_object(first)) return;
    enum { COLUMNS = 16, WIDTH = 48 };
    const char *names[COLUMNS];
    int widths[COLUMNS];
    size_t n = 0;
    const char *key;
    json_t *item;
    json_object_foreach(first, key, item) {
        if (n == COLUMNS) break;
        names[n] = key;
        widths[n++] = (int)strlen(key);
    }
    size_t index;
    json_t *row;
    char cell[WIDTH + 1];
    json_array_foreach(rows, index, row) {
        for (size_t c = 0; c < n; c++) {
            FILE *m = fmemopen(cell, sizeof cell, "w");
            if (!m) continue;
            print_value(m, json_object_get(row, names[c]));
            long w = ftell(m);
            fclose(m);
            if (w > widths[c]) widths[c] = (int)(w > WIDTH ? WIDTH : w);
        }
    }
    fputs(indent, stdout);
    for (size_t c = 0; c < n; c++) printf("%-*s  ", widths[c], names[c]);
    putchar('\n');
    json_array_foreach(rows, index, row) {
        fputs(indent, stdout);
        for (size_t c = 0; c < n; c++) {
            memset(cell, 0, sizeof cell);
            FILE *m = fmemopen(cell, sizeof cell, "w");
            if (m) {
                const json_t *v = json_object_get(row, names[c]);
                if (v) print_value(m, v);
                fclose(m);
            }
            printf("%-*s  ", widths[c], cell);
        }
        putchar('\n');
    }
}

/* The groups the counters of a status reply are shown in, by key prefix or
 * name; a counter in none of them goes under "other". */
static const struct {
    const char *title;
    const char *keys[24];
} GROUPS[] = {
    {"session", {"joins", "leaves", "refusals", "takeovers", "desyncs", "dropped_steps", "dropped_out", "events",
                 "events_dropped", "spectators", "durable_steps", "reloads", "reload_refusals", "reload_unchanged",
                 "refused_reloads", NULL}},
    {"network", {"bytes_", "packets_", "dropped_malformed", "steps_repeated", "repairs", "fell_behind",
                 "dropped_in_full", "dropped_stale", NULL}},
    {"security", {"rate_", "auth_", "replayed", "unauthenticated", "bad_credential", "tokens_", "token_",
                  NULL}},
    {"dev protocol", {"dev_", NULL}},
};
#define GROUP_COUNT (sizeof GROUPS / sizeof GROUPS[0])

/* Shown in the headline, not among the counters. */
static const char *const HEADLINE[] = {"ok", "id", "step", "mode", "paused", "uptime_ms", "game", "build", "log",
                                       "hash", "players", "player_limit", "seed", "rate", "secure", "last_reload"};

static bool in_headline(const char *key) {
    for (size_t i = 0; i < sizeof HEADLINE / sizeof HEADLINE[0]; i++)
        if (!strcmp(HEADLINE[i], key)) return true;
    return false;
}

static size_t group_of(const char *key) {
    for (size_t g = 0; g < GROUP_COUNT; g++) {
        for (size_t k = 0; GROUPS[g].keys[k]; k++) {
            const char *want = GROUPS[g].keys[k];
            size_t n = strlen(want);
            if (want[n - 1] == '_' ? !strncmp(key, want, n) : !strcmp(key, want)) return g;
        }
    }
    return GROUP_COUNT; /* other */
}

static bool is_zero(const json_t *v) {
    return json_is_null(v) || (json_is_integer(v) && json_integer_value(v) == 0) || (json_is_real(v) && json_real_value(v) == 0.0) ||
           json_is_false(v) || (json_is_string(v) && json_string_length(v) == 0);
}

/* One group's non-zero counters on one line ("  network: a 1, b 2"). */
static void print_group(json_t *root, size_t group, const char *title) {
    const char *key;
    json_t *item;
    bool any = false;
    json_object_foreach(root, key, item) {
        if (in_headline(key) || json_is_array(item) || json_is_object(item) || group_of(key) != group) continue;
        if (is_zero(item)) continue;
        printf(any ? ", " : "  %-13s ", title);
        printf("%s ", key);
        print_value(stdout, item);
        any = true;
    }
    if (any) putchar('\n');
}

static void print_uptime(int64_t ms) {
    int64_t s = ms / 1000;
    if (s >= 3600) printf("  up %" PRId64 "h %02" PRId64 "m", s / 3600, s / 60 % 60);
    else if (s >= 60) printf("  up %" PRId64 "m %02" PRId64 "s", s / 60, s % 60);
    else printf("  up %" PRId64 ".%01" PRId64 "s", s, ms % 1000 / 100);
}

static void print_readable(json_t *root) {
    const json_t *v;
    if ((v = json_object_get(root, "step"))) {
        printf("step ");
        print_value(stdout, v);
        if ((v = json_object_get(root, "mode"))) {
            printf("  %s", json_string_value(v) ? json_string_value(v) : "?");
            if (json_is_true(json_object_get(root, "paused"))) printf(" (paused)");
        }
        if ((v = json_object_get(root, "uptime_ms")) && json_is_integer(v)) print_uptime(json_integer_value(v));
        putchar('\n');
    }
    if ((v = json_object_get(root, "game"))) {
        printf("game ");
        print_value(stdout, v);
        if ((v = json_object_get(root, "build"))) printf("  build "), print_value(stdout, v);
        if ((v = json_object_get(root, "hash"))) printf("  hash "), print_value(stdout, v);
        putchar('\n');
    }
    if ((v = json_object_get(root, "log")) && !is_zero(v)) {
        printf("log ");
        print_value(stdout, v);
        const json_t *durable = json_object_get(root, "durable_steps");
        if (durable) printf("  durable to step "), print_value(stdout, durable);
        putchar('\n');
    }
    if ((v = json_object_get(root, "last_reload")) && !is_zero(v)) printf("last reload "), print_value(stdout, v),
                                                                   putchar('\n');
    json_t *players = json_object_get(root, "players");
    if (json_is_array(players)) {
        printf("players %zu", json_array_size(players));
        if ((v = json_object_get(root, "player_limit"))) printf(" of "), print_value(stdout, v);
        if ((v = json_object_get(root, "spectators"))) printf(", spectators "), print_value(stdout, v);
        putchar('\n');
        print_table("  ", players);
    } else if (players) {
        printf("players "), print_value(stdout, players), putchar('\n');
    }
    for (size_t g = 0; g < GROUP_COUNT; g++) print_group(root, g, GROUPS[g].title);
    print_group(root, GROUP_COUNT, "other");
}

int ctl_show_reply(ctl_format format, const char *line, size_t length) {
    json_t *root = ctl_parse_line(line, length);
    const json_t *ok = json_object_get(root, "ok");
    int verdict = json_is_true(ok) ? 0 : 1;
    if (format == CTL_JSON) {
        fwrite(line, 1, length, stdout);
        putchar('\n');
    } else if (!json_is_object(root) || !json_is_boolean(ok)) {
        printf("? ");
        fwrite(line, 1, length, stdout);
        putchar('\n');
        fprintf(stderr, "cradlectl: the reply is not a dev-protocol reply\n");
        verdict = 1;
    } else if (verdict != 0) {
        print_error(root);
    } else if (format == CTL_READABLE && json_object_size(root) > 2) {
        print_readable(root);
    } else {
        print_line_form(root);
    }
    fflush(stdout);
    json_decref(root);
    return verdict;
}

int ctl_show_event(ctl_format format, const char *line, size_t length) {
    if (format == CTL_JSON) {
        fwrite(line, 1, length, stdout);
        putchar('\n');
        fflush(stdout);
        json_t *root = ctl_parse_line(line, length);
        const char *event = json_string_value(json_object_get(root, "event"));
        int rc = !event ? 1 : !strcmp(event, "dropped") ? 2 : 0;
        json_decref(root);
        return rc;
    }
    json_t *root = ctl_parse_line(line, length);
    const char *event = json_string_value(json_object_get(root, "event"));
    if (!event) {
        json_decref(root);
        return 1;
    }
    char clock[16];
    time_t now = time(NULL);
    struct tm tm;
    strftime(clock, sizeof clock, "%H:%M:%S", localtime_r(&now, &tm));
    printf("%s  ", clock);
    const json_t *step = json_object_get(root, "step");
    if (step) printf("step %-8" JSON_INTEGER_FORMAT " ", json_integer_value(step));
    printf("%-12s", event);
    const char *level = json_string_value(json_object_get(root, "level"));
    if (level && strcmp(level, "info") != 0) printf("%s: ", level);
    const char *key;
    json_t *item;
    json_object_foreach(root, key, item) {
        if (!strcmp(key, "event") || !strcmp(key, "step") || !strcmp(key, "level")) continue;
        if (!strcmp(key, "message") || !strcmp(key, "reason")) {
            print_value(stdout, item);
            putchar(' ');
        } else {
            printf("%s ", key);
            print_value(stdout, item);
            putchar(' ');
        }
    }
    putchar('\n');
    fflush(stdout);
    int rc = !strcmp(event, "dropped") ? 2 : 0;
    json_decref(root);
    return rc;
}
