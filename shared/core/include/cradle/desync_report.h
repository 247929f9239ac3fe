#ifndef CRADLE_DESYNC_REPORT_H
#define CRADLE_DESYNC_REPORT_H
/*
 * desync_report: reads the report a client writes at its first desync
 * (client/net/netclient.h documents the format): a text header of
 * "key value" lines in a fixed order, then the state after base_step, the
 * snapshots of steps base_step+1 .. step, and the client's state after step.
 *
 * The report is a file from a user's machine: outside bytes. Every field is
 * checked (names and ids printable, numbers decimal and in range, hashes 16
 * hex digits, the counts consistent, the binary part exactly as long as the
 * header says) and a refusal names the line and the field. Pure: the caller
 * owns the bytes; the parsed report points into them.
 */
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"
#include "cradle/game_abi.h"

#define CRADLE_DESYNC_REPORT_STATE_MAX (256u << 20) /* the largest state a report may hold */
#define CRADLE_DESYNC_REPORT_MESSAGE_MAX 256u

typedef struct cradle_desync_report {
    char game[CRADLE_GAME_NAME_MAX + 1];
    char build[CRADLE_GAME_BUILD_ID_MAX + 1];
    uint64_t step;          /* the first step whose hashes differ */
    uint64_t client_hash, server_hash;
    int64_t base_step;      /* the base state is the state after it (-1: the start state) */
    uint32_t snapshot_size;
    uint64_t snapshots;     /* of steps step - snapshots + 1 .. step */
    int truncated;          /* 1: fewer snapshots than step - base_step (the client's history overflowed) */
    uint32_t state_size;
    const uint8_t *base;    /* state_size bytes */
    const uint8_t *snapshot_data; /* snapshots * snapshot_size bytes, in step order */
    const uint8_t *client_state;  /* state_size bytes */
} cradle_desync_report;

/* Parses size bytes. Returns 0, or CRADLE_EDESYNC_REPORT with message naming the
 * line and the field ("line 5: client_hash 'xyz' is not 16 hex digits") or
 * the byte count that is wrong. */
CRADLE_MUST_CHECK int cradle_desync_report_parse(cradle_desync_report *report, const uint8_t *bytes, size_t size,
                                                 char *message, size_t message_size);

#endif
