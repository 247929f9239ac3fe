/*
 * fuzz_desync_report: a client's desync report (a file from a user's
 * machine) through cradle_desync_report_parse. The input is copied into a
 * heap buffer of exactly its size, so any overread is an ASan finding. When
 * the parser accepts, what it returns must hold: printable names within
 * their limits, base_step before step, the snapshot count within the steps,
 * and the three binary parts laid end to end to exactly the input's end.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/desync_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *bytes = malloc(size ? size : 1);
    if (!bytes) abort();
    memcpy(bytes, data, size);
    cradle_desync_report r;
    char message[CRADLE_DESYNC_REPORT_MESSAGE_MAX];
    int rc = cradle_desync_report_parse(&r, bytes, size, message, sizeof message);
    if (!memchr(message, 0, sizeof message)) abort();
    if (rc != 0) {
        if (rc != CRADLE_EDESYNC_REPORT || message[0] == '\0') abort();
    } else {
        size_t g = strlen(r.game), b = strlen(r.build);
        if (g < 1 || g > CRADLE_GAME_NAME_MAX || b < 1 || b > CRADLE_GAME_BUILD_ID_MAX) abort();
        if (r.base_step < -1 || (r.base_step >= 0 && (uint64_t)r.base_step >= r.step)) abort();
        if (r.snapshots > r.step - (uint64_t)(r.base_step + 1) + 1) abort();
        if (r.state_size < 1 || r.snapshot_size < 1) abort();
        const uint8_t *end = r.client_state + r.state_size;
        if (r.base < bytes || r.snapshot_data != r.base + r.state_size ||
            r.client_state != r.snapshot_data + r.snapshots * r.snapshot_size || end != bytes + size)
            abort();
    }
    free(bytes);
    return 0;
}
