#ifndef CRADLE_CTL_H
#define CRADLE_CTL_H
/*
 * cradlectl's parts: cradlectl.c (options, the connection, one command, a
 * script, a prompt, watch) and ctl_print.c (showing replies and events).
 */
#include <jansson.h>
#include <stddef.h>

typedef enum ctl_format {
    CTL_LINE,     /* "ok  key=value ...": pipes and scripts */
    CTL_READABLE, /* a block with tables: a terminal */
    CTL_JSON,     /* the raw line: --json */
} ctl_format;

/* One line from a host as JSON (numbers beyond 2^63 read as doubles), or
 * NULL when it is not JSON. */
json_t *ctl_parse_line(const char *line, size_t length);

/* Prints one reply line in format; returns 0 for ok:true, else 1. */
int ctl_show_reply(ctl_format format, const char *line, size_t length);

/* Prints one event line ({"event":...}) as a timestamped line, or raw with
 * CTL_JSON. Returns 0, 1 when it is not an event, 2 for the host's
 * "dropped" (the host closes the stream after it). */
int ctl_show_event(ctl_format format, const char *line, size_t length);

#endif
