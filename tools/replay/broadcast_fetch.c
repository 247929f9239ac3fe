/*
 * broadcast_fetch: cradle-replay URL (see broadcast_fetch.h).
 */
#include "broadcast_fetch.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cradle/broadcast_mirror.h"
#include "cradle/os.h"
#include "cradle/systime.h"

#define STALL_MS 15000u /* no new fragment for this long, with one announced: give up */
#define SETTLE_MS 3000u /* a live broadcast: caught up this long (3x the sync document's max-age) */
#define REFUSALS_MAX 3u /* refused this many times without progress: the published bytes are bad */

void broadcast_fetch_clean(broadcast_fetch *f) {
    if (f->dir[0]) cradle_os_remove_tree(f->dir);
    f->dir[0] = '\0';
}

/* Whether the mirror holds everything: the end, or every fragment a live
 * broadcast has published, for SETTLE_MS (a cache may serve a sync
 * document a second old: one that just ended says so by then). */
static int caught_up(const cradle_broadcast_mirror_view *v, uint64_t *since_ns) {
    if (v->ended) return 1;
    if (!(v->have_sync && v->segment == 1 && v->fragments >= v->sync.fragments && v->sync.fragments > 0)) {
        *since_ns = 0;
        return 0;
    }
    uint64_t now = cradle_mono_ns();
    if (!*since_ns) *since_ns = now;
    return now - *since_ns >= (uint64_t)SETTLE_MS * 1000000u;
}

int broadcast_fetch_run(broadcast_fetch *f, const char *url, const unsigned char *verify_key, char *message,
                        size_t message_size) {
    memset(f, 0, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "%s/cradle-replay-XXXXXX", cradle_os_tmpdir());
    if (!mkdtemp(f->dir)) {
        snprintf(message, message_size, "cannot create a folder in %s for the broadcast", cradle_os_tmpdir());
        f->dir[0] = '\0';
        return 1;
    }
    cradle_broadcast_mirror *m = NULL;
    cradle_broadcast_mirror_config config = {
        .url = url, .dir = f->dir, .from_start = true, .poll_ms = 200, .verify_key = verify_key};
    if (cradle_broadcast_mirror_open(&m, &config, message, message_size) != 0) return 1;
    cradle_broadcast_mirror_view v;
    uint64_t last_progress = cradle_mono_ns(), fragments = 0, refused_before = 0;
    uint64_t settled = 0;
    int rc = 1;
    for (;;) {
        cradle_broadcast_mirror_view_now(m, &v);
        if (v.segment > 1 || (v.have_sync && cradle_broadcast_sync_in_gap(&v.sync, v.fragments))) {
            snprintf(message, message_size,
                     "the broadcast has a gap (fragment %llu was lost before it reached the origin): its fragments "
                     "no longer make one log",
                     (unsigned long long)v.fragments);
            break;
        }
        if (caught_up(&v, &settled)) {
            rc = 0;
            break;
        }
        if (v.fragments != fragments) {
            fragments = v.fragments;
            refused_before = v.refused;
            last_progress = cradle_mono_ns();
        }
        /* documents are immutable: the same refusal again and again is what
           was published, not a cache's passing damage */
        if (v.refused - refused_before >= REFUSALS_MAX) {
            snprintf(message, message_size, "refused %u times after %llu fragments: %s", REFUSALS_MAX,
                     (unsigned long long)v.fragments, v.error);
            break;
        }
        if (cradle_mono_ns() - last_progress > (uint64_t)STALL_MS * 1000000u) {
            snprintf(message, message_size, "no progress for %u s after %llu fragments: %s", STALL_MS / 1000u,
                     (unsigned long long)v.fragments, v.error[0] ? v.error : "nothing new published");
            break;
        }
        cradle_sleep_ns(50000000u);
    }
    cradle_broadcast_mirror_close(m);
    snprintf(f->log, sizeof f->log, "%s", v.log_path);
    f->fragments = v.fragments;
    f->bytes = v.bytes;
    f->ended = v.ended;
    if (rc == 0 && v.refused)
        fprintf(stderr, "cradle-replay: %s: %llu documents were refused and fetched again (the last: %s)\n", url,
                (unsigned long long)v.refused, v.error);
    return rc;
}
