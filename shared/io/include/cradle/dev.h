#ifndef CRADLE_DEV_H
#define CRADLE_DEV_H
/*
 * dev: the dev protocol, one JSON object per line (seed 001).
 *
 * Requests:
 *   {"cmd":"step","count":N}   1 <= N <= the maximum the host passes to parse
 *   {"cmd":"status"}
 *   {"cmd":"quit"}
 *   {"cmd":"<other>", ...}     a host command: parse returns CRADLE_EDEV_UNKNOWN
 *                              and cradle_dev_common() returns NULL; the host
 *                              looks the name up in its own table
 *                              (cradle_dev_find) and reads its fields with
 *                              cradle_dev_arg_integer() and
 *                              cradle_dev_arg_names().
 * Any request may carry "id" (a string, or an integer below 2^53 in
 * magnitude); its reply echoes it exactly.
 *
 * Strict JSON (RFC 8259, parsed with json_reader.h into the request's own
 * token array): a line is exactly one JSON value with only space, tab, CR or
 * LF around it. Refused as not_json and never run: bytes after the value, a
 * form feed or NUL as whitespace, duplicate keys, NUL in a string or key (raw
 * or \u0000), invalid UTF-8 or lone surrogates, leading zeros (01), bare
 * dots (1., .5), integers beyond the 64-bit range (below -2^63 or above
 * 2^63 - 1), numbers beyond a double (1e999), nesting deeper than
 * CRADLE_JSON_MAX_DEPTH (64), more than CRADLE_DEV_TOKENS (512) values, keys
 * included. The message names the byte, counted from 0, where it went wrong
 * (the line's length when it ended too soon). A value that is not an object
 * is not_object. Integer fields (count, slot, ...) must be JSON integers:
 * 1.0 and 1e3 are reals and refused (count_not_integer); from 2^53 on an
 * integer is count_too_large (a double stops being exact there).
 *
 * Replies, one line each:
 *   {"ok":true[,"id":...][,fields...]}
 *   {"ok":false[,"id":...],"error":"<cradle_error_name(code)>","message":"<what was wrong>"}
 * Every string that reaches a reply is escaped here: control characters
 * become \u00XX and bytes that are not valid UTF-8 become \ufffd, so a reply
 * is valid JSON whatever bytes the request held.
 *
 * Memory: nothing allocates. A request holds its tokens (about 12 KiB: it
 * lives on the handler's stack) and points into the caller's line, which
 * must stay unchanged until cradle_dev_request_deinit. Replies are written
 * into a cradle_writer over caller memory.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"
#include "cradle/json_reader.h"
#include "cradle/writer.h"

/* The largest count a host may allow: every integer below 2^53 is exact in
 * the double a JSON number is read into. */
#define CRADLE_DEV_COUNT_LIMIT ((UINT64_C(1) << 53) - 1)

/* ---- requests ---- */

typedef enum cradle_dev_kind {
    CRADLE_DEV_STEP,
    CRADLE_DEV_STATUS,
    CRADLE_DEV_QUIT,
} cradle_dev_kind;

/* One of the three common commands. */
typedef struct cradle_dev_command {
    cradle_dev_kind kind;
    uint64_t count; /* STEP only: 1 .. the maximum given to parse */
} cradle_dev_command;

#define CRADLE_DEV_MESSAGE_BYTES 192u
/* The most values (keys included) a request line holds: a line with more is
 * not_json ("more than 512 values"). No command needs a tenth of them. */
#define CRADLE_DEV_TOKENS 512u
/* cmd_text's size: a command name longer than CRADLE_DEV_CMD_BYTES - 1
 * bytes is kept cut to that, so it names no host command (a host's names
 * must be shorter) and is unknown_command. */
#define CRADLE_DEV_CMD_BYTES 128u

/* What parse learnt from one line. Fill it only with cradle_dev_parse; the
 * pointers point into the line given to parse and into the request itself,
 * and live until cradle_dev_request_deinit. */
typedef struct cradle_dev_request {
    const char *line;        /* the line given to parse, and its length */
    size_t length;
    uint32_t count;          /* tokens filled: 0 when the line was not JSON */
    const cradle_json_token *id; /* "id"'s value when it is a string or an integer
                                           below 2^53 in magnitude, else NULL */
    int64_t id_value;        /* the integer id's value */
    const char *cmd;         /* "cmd" decoded, NUL-terminated (in cmd_text), when it is a string,
                                else NULL */
    cradle_dev_command command; /* meaningful when error == 0 */
    int error;               /* what parse returned */
    char message[CRADLE_DEV_MESSAGE_BYTES]; /* what was wrong (raw bytes, escaped on output) */
    char cmd_text[CRADLE_DEV_CMD_BYTES];
    /* The line's json_reader tokens (cradle_dev_request_doc reads them).
     * Only dev.c writes them. */
    cradle_json_token tokens[CRADLE_DEV_TOKENS];
} cradle_dev_request;

/* Parses one line (length bytes, no newline needed, no NUL needed; anything
 * but JSON whitespace after the value is an error). max_count is the largest
 * step count the host allows, 1 .. CRADLE_DEV_COUNT_LIMIT (asserted).
 * Returns 0 for a valid common command, CRADLE_EDEV_UNKNOWN for a well-formed
 * request naming another command (request->cmd and the tokens are set), or
 * one of:
 *   CRADLE_EDEV_NOT_JSON     not JSON, bytes after the value, or past the
 *                            limits above (depth, values, number ranges)
 *   CRADLE_EDEV_NOT_OBJECT   JSON but not an object
 *   CRADLE_EDEV_NO_CMD       no "cmd"
 *   CRADLE_EDEV_CMD_TYPE     "cmd" is not a string
 *   CRADLE_EDEV_ARGUMENT     "id" is neither a string nor a number
 *   CRADLE_EDEV_COUNT_*      step's count missing / not a number / fractional /
 *                            negative / zero / above max_count / >= 2^53 or infinite
 * On every return request->message says what was wrong (empty on 0) and
 * request->id is set when the id could be read, so even an error reply
 * echoes it. The request points into line: keep it unchanged until
 * cradle_dev_request_deinit, which is always to be called afterwards.
 * Allocates nothing. */
int cradle_dev_parse(cradle_dev_request *request, const char *line, size_t length,
                     uint64_t max_count);

/* Ends the request's use of its line. Frees nothing (nothing was allocated):
 * the pair stays so that a host's code does not depend on that. */
void cradle_dev_request_deinit(cradle_dev_request *request);

/* The parsed line as a json_reader document (cradle/json_reader.h), for a
 * host that reads fields of its own with json_reader's readers: the root is
 * tokens[0]; doc->count is 0 when the line was not JSON. Valid while the
 * request is. */
void cradle_dev_request_doc(const cradle_dev_request *request, cradle_json_doc *doc);

/* The common command of a request parse accepted, or NULL for anything else
 * (a host command or an error). */
const cradle_dev_command *cradle_dev_common(const cradle_dev_request *request);

/* Reads the optional integer field `name` of a host command into *out.
 * Absent: *out = fallback and 0 when not required, else CRADLE_EDEV_ARGUMENT.
 * Present but not a JSON integer in [min, max]: CRADLE_EDEV_ARGUMENT and
 * request->message names the field, the range and the value got. min and max
 * must lie within +-(2^53 - 1) (asserted). */
int cradle_dev_arg_integer(cradle_dev_request *request, const char *name, bool required,
                           int64_t min, int64_t max, int64_t fallback, int64_t *out);

/* Reads the optional field `name`, an array of strings each one of
 * names[0..count-1] (count <= 64), into *mask (bit i for names[i]); absent:
 * every bit. Anything else is CRADLE_EDEV_ARGUMENT naming what was wrong. */
int cradle_dev_arg_names(cradle_dev_request *request, const char *name, const char *const *names, size_t count,
                         uint64_t *mask);

/* A host's command table: it looks a request's cmd up by exact name. */
typedef struct cradle_dev_entry {
    const char *name;
    /* Writes exactly one reply line; returns true when the host should quit. */
    bool (*handle)(void *host, cradle_dev_request *request, cradle_writer *reply);
} cradle_dev_entry;

/* The entry named name, or NULL (also for a NULL name). */
const cradle_dev_entry *cradle_dev_find(const cradle_dev_entry *table, size_t count,
                                        const char *name);

/* ---- replies ---- */

/* {"ok":true and the request's id (request may be NULL). Follow with fields
 * and cradle_dev_reply_end. */
void cradle_dev_reply_begin(cradle_writer *reply, const cradle_dev_request *request);
void cradle_dev_field_u64(cradle_writer *reply, const char *key, uint64_t value);
void cradle_dev_field_i64(cradle_writer *reply, const char *key, int64_t value);
void cradle_dev_field_bool(cradle_writer *reply, const char *key, bool value);
/* A NUL-terminated string value, escaped. */
void cradle_dev_field_string(cradle_writer *reply, const char *key, const char *value);
/* A value the caller vouches is valid JSON text (an array it built, say). */
void cradle_dev_field_raw(cradle_writer *reply, const char *key, const char *json);
/* Closes the object and ends the line. */
void cradle_dev_reply_end(cradle_writer *reply);

/* {"ok":true} with the id. */
void cradle_dev_reply_ok(cradle_writer *reply, const cradle_dev_request *request);

/* The whole error line for code (a negative CRADLE_E... code); message NULL
 * means cradle_strerror(code). request may be NULL. */
void cradle_dev_reply_error(cradle_writer *reply, const cradle_dev_request *request, int code,
                            const char *message);

/* The error line for what parse refused: request->error and request->message. */
void cradle_dev_reply_parse_error(cradle_writer *reply, const cradle_dev_request *request);

#endif
