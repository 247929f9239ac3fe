#include "cradle/input_script.h"

int cradle_input_script_check(const cradle_input_script_change *changes, size_t count) {
    for (size_t i = 1; i < count; i++) {
        if (changes[i].step <= changes[i - 1].step) return CRADLE_EUNSORTED;
    }
    return CRADLE_OK;
}

int cradle_input_script_at(const cradle_input_script_change *changes, size_t count, uint64_t pulse_mask,
                    uint64_t step, uint64_t *bits) {
    *bits = 0;
    int rc = cradle_input_script_check(changes, count);
    if (rc != CRADLE_OK) return rc;
    /* Binary search for the last entry with entry.step <= step. */
    size_t lo = 0, hi = count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (changes[mid].step <= step) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo == 0) return CRADLE_OK;
    const cradle_input_script_change *entry = &changes[lo - 1];
    *bits = entry->step == step ? entry->bits : entry->bits & ~pulse_mask;
    return CRADLE_OK;
}
