#ifndef CRADLE_SETTLE_H
#define CRADLE_SETTLE_H
/*
 * settle: reports a change to a file once the file has held still
 * (seed 001, "settle").
 *
 * At each look the caller passes the file's size, its modification time and
 * the current time; settle reads no clock and no file of its own. The first
 * look records a baseline and reports nothing. A look whose size or
 * modification time differs from the previous look's is a change: it restarts
 * the window. The change is reported exactly once, by the first look at which
 * size and modification time have held still for window_ns since the last
 * change seen; then settle waits for the next change. A file that keeps
 * changing (a build writing it in chunks) is therefore never reported while
 * it is being written.
 *
 * Time is any monotonic nanosecond count. A look whose now_ns is earlier than
 * the last change (a caller's clock going backwards) counts as no time
 * elapsed; it never underflows into "long ago".
 */
#include <stdbool.h>
#include <stdint.h>

typedef struct cradle_settle {
    uint64_t window_ns;      /* how long the file must hold still */
    uint64_t size;           /* size at the previous look */
    int64_t mtime_ns;        /* modification time at the previous look */
    uint64_t last_change_ns; /* now_ns of the look that saw the last change */
    bool has_baseline;       /* a first look happened */
    bool pending;            /* a change was seen and not yet reported */
} cradle_settle;

/* Sets up a detector with no baseline. A window of 0 reports a change at the
 * very look that sees it. */
void cradle_settle_init(cradle_settle *settle, uint64_t window_ns);

/* One look at the file. Returns true exactly when the change seen last is to
 * be reported now (see the top of this header). */
bool cradle_settle_look(cradle_settle *settle, uint64_t size, int64_t mtime_ns, uint64_t now_ns);

/* Makes (size, mtime_ns) the new baseline and drops any pending change: the
 * caller has just acted on the file as it is (for example a reload forced
 * without waiting), so that state is not to be reported again. */
void cradle_settle_rebase(cradle_settle *settle, uint64_t size, int64_t mtime_ns);

/* True while a change was seen and is not yet reported. */
bool cradle_settle_pending(const cradle_settle *settle);

#endif
