#include "cradle/settle.h"

#include <assert.h>

void cradle_settle_init(cradle_settle *settle, uint64_t window_ns) {
    assert(settle);
    *settle = (cradle_settle){.window_ns = window_ns};
}

bool cradle_settle_look(cradle_settle *settle, uint64_t size, int64_t mtime_ns, uint64_t now_ns) {
    assert(settle);
    if (!settle->has_baseline) {
        settle->has_baseline = true;
        settle->size = size;
        settle->mtime_ns = mtime_ns;
        settle->last_change_ns = now_ns;
        return false;
    }
    if (size != settle->size || mtime_ns != settle->mtime_ns) {
        settle->size = size;
        settle->mtime_ns = mtime_ns;
        settle->last_change_ns = now_ns;
        settle->pending = true;
    }
    if (!settle->pending) return false;
    /* A clock that went backwards has elapsed nothing. */
    uint64_t held = now_ns >= settle->last_change_ns ? now_ns - settle->last_change_ns : 0;
    if (held < settle->window_ns) return false;
    settle->pending = false;
    return true;
}

void cradle_settle_rebase(cradle_settle *settle, uint64_t size, int64_t mtime_ns) {
    assert(settle);
    settle->has_baseline = true;
    settle->size = size;
    settle->mtime_ns = mtime_ns;
    settle->pending = false;
}

bool cradle_settle_pending(const cradle_settle *settle) {
    assert(settle);
    return settle->pending;
}
