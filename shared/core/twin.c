#include "cradle/twin.h"

#include "cradle/contract.h"
#include "cradle/golden.h"
#include "cradle/internal.h"
#include "cradle/layout.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

int cradle_twin_init(cradle_twin *t, const cradle_sim *first, void *storage, uint32_t capacity, uint32_t align,
                     char *message, size_t message_size) {
    assert(t && first && first->contract && storage);
    memset(t, 0, sizeof *t);
    if (capacity < first->state_capacity)
        return cradle__say(CRADLE_ERELOAD_SIZE, message, message_size, "twin storage %u < the first's %u bytes",
                           (unsigned)capacity, (unsigned)first->state_capacity);
    cradle_sim_config config = {
        .state = storage, .state_capacity = capacity, .state_align = align, .hash = first->hash};
    int rc = cradle_sim_init(&t->sim, &config, first->contract, message, message_size);
    if (rc != CRADLE_OK) return rc;
    memcpy(t->sim.state, first->state, first->state_capacity);
    t->sim.next_step = first->next_step;
    return CRADLE_OK;
}

void cradle_twin_step(cradle_twin *t, const uint8_t *snapshot) {
    assert(t && t->sim.contract);
    cradle_sim_step(&t->sim, snapshot);
}

int cradle_twin_swap(cradle_twin *t, const cradle_game_contract *contract, char *message, size_t message_size) {
    assert(t && t->sim.contract);
    return cradle_sim_swap(&t->sim, contract, message, message_size);
}

/* Copies up to CRADLE_TWIN_SHOW bytes of bytes[0..size) from offset. */
static size_t show(uint8_t *out, const uint8_t *bytes, size_t size, size_t offset) {
    size_t n = offset < size ? size - offset : 0;
    if (n > CRADLE_TWIN_SHOW) n = CRADLE_TWIN_SHOW;
    memcpy(out, bytes + offset, n);
    return n;
}

static bool differ(cradle_twin *t, const cradle_sim *first, bool state, const uint8_t *a, size_t a_size,
                   const uint8_t *b, size_t b_size, size_t offset) {
    cradle_twin_difference *d = &t->difference;
    *d = (cradle_twin_difference){.step = first->next_step - 1,
                                  .state = state,
                                  .offset = offset,
                                  .first_size = a_size,
                                  .twin_size = b_size,
                                  .first_hash = cradle_sim_hash(first),
                                  .twin_hash = cradle_sim_hash(&t->sim)};
    if (state) {
        uint32_t regions = 0;
        const cradle_state_region *layout = cradle_contract_layout(first->contract, &regions);
        (void)cradle_layout_name(layout, regions, offset, d->name, sizeof d->name);
    } else {
        snprintf(d->name, sizeof d->name, "output byte %zu", offset);
    }
    d->first_shown = show(d->first, a, a_size, offset);
    d->twin_shown = show(d->twin, b, b_size, offset);
    t->failed = true;
    return false;
}

bool cradle_twin_part_equal(const cradle_twin *t, const cradle_sim *first, size_t from, size_t to) {
    assert(t && first && from <= to && to <= cradle_sim_state_size(first));
    return memcmp(first->state + from, t->sim.state + from, to - from) == 0;
}

bool cradle_twin_check_output(cradle_twin *t, const cradle_sim *first, const uint8_t *first_output,
                              size_t first_output_size) {
    assert(t && first && t->sim.contract == first->contract && "both sims run the same build");
    assert(t->sim.next_step == first->next_step && first->next_step > 0 && "both ran the same step");
    if (t->failed) return false;
    if (first_output) {
        if (cradle_sim_output(&t->sim) != CRADLE_OK) t->sim.output_size = 0; /* the first run's check reports it */
        cradle_golden_result g = cradle_golden_compare(first_output, first_output_size, t->sim.output,
                                                       t->sim.output_size);
        if (!g.equal)
            return differ(t, first, false, first_output, first_output_size, t->sim.output, t->sim.output_size,
                          g.first_difference);
    }
    t->checked++;
    return true;
}

bool cradle_twin_check(cradle_twin *t, const cradle_sim *first, const uint8_t *first_output,
                       size_t first_output_size) {
    assert(t && first && t->sim.contract == first->contract && "both sims run the same build");
    assert(t->sim.next_step == first->next_step && first->next_step > 0 && "both ran the same step");
    if (t->failed) return false;
    uint32_t size = cradle_sim_state_size(first);
    cradle_golden_result g = cradle_golden_compare(first->state, size, t->sim.state, size);
    if (!g.equal) return differ(t, first, true, first->state, size, t->sim.state, size, g.first_difference);
    return cradle_twin_check_output(t, first, first_output, first_output_size);
}
