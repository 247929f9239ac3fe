/* cradle-replay --synctest: each step run twice from the same state (synctest.h). */
#include "synctest.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/layout.h"

#define BLOCK_ALIGN CRADLE_RELOAD_DEFAULT_MAX_ALIGN

int synctest_open(synctest *t, const cradle_replay *r, uint64_t every) {
    memset(t, 0, sizeof *t);
    t->every = every ? every : SYNCTEST_DEFAULT_EVERY;
    t->capacity = r->capacity;
    t->before = malloc(t->capacity);
    t->after = malloc(t->capacity);
    t->block = aligned_alloc(BLOCK_ALIGN, (size_t)t->capacity + BLOCK_ALIGN);
    if (!t->before || !t->after || !t->block) {
        synctest_close(t);
        return CRADLE_ENOMEM;
    }
    cradle_sim_save(&r->sim, t->before);
    return 0;
}

void synctest_close(synctest *t) {
    free(t->before);
    free(t->after);
    free(t->block);
    t->before = t->after = t->block = NULL;
}

/* Moves the state to the other storage: the second block, at an offset of
 * the build's alignment (so the address is no more aligned than the
 * contract asks, unless it asks the most), or back to the driver's. */
static int move(synctest *t, cradle_replay *r) {
    uint32_t align = r->sim.contract->state_align;
    size_t offset = align < BLOCK_ALIGN ? align : BLOCK_ALIGN;
    int rc = t->away ? cradle_replay_move(r, NULL, 0) : cradle_replay_move(r, t->block + offset, t->capacity);
    if (rc != 0) return rc;
    t->away = !t->away;
    t->moves++;
    return 0;
}

/* Copies up to SYNCTEST_SHOW bytes of bytes[0..size) from offset. */
static size_t show(uint8_t *out, const uint8_t *bytes, size_t size, size_t offset) {
    size_t n = offset < size ? size - offset : 0;
    if (n > SYNCTEST_SHOW) n = SYNCTEST_SHOW;
    memcpy(out, bytes + offset, n);
    return n;
}

/* Records the first difference: the first run's bytes `first`, the
 * re-run's `rerun`, both hashes from the state blocks. */
static int differ(synctest *t, const cradle_replay *r, bool state, const uint8_t *first, size_t first_size,
                  const uint8_t *rerun, size_t rerun_size, size_t offset) {
    synctest_failure *f = &t->failure;
    uint32_t size = cradle_sim_state_size(&r->sim);
    uint64_t step = r->sim.next_step - 1;
    *f = (synctest_failure){.step = step,
                            .state = state,
                            .moved = step > 0 && step % t->every == 0, /* as take_step() moves */
                            .offset = offset,
                            .first_size = first_size,
                            .rerun_size = rerun_size,
                            .first_hash = r->sim.hash(t->after, size),
                            .rerun_hash = cradle_sim_hash(&r->sim)};
    uint32_t regions = 0;
    const cradle_state_region *layout = cradle_contract_layout(r->sim.contract, &regions);
    if (state) (void)cradle_layout_name(layout, regions, offset, f->name, sizeof f->name);
    else snprintf(f->name, sizeof f->name, "output byte %zu", offset);
    f->first_shown = show(f->first, first, first_size, offset);
    f->rerun_shown = show(f->rerun, rerun, rerun_size, offset);
    t->failed = true;
    return 1;
}

/* A step next() just ran: keep its state and output, move when its turn
 * comes, run it again from the state before it and compare. */
static int take_step(synctest *t, cradle_replay *r, const cradle_replay_item *item) {
    uint32_t size = cradle_sim_state_size(&r->sim);
    cradle_sim_save(&r->sim, t->after);
    t->output_size = item->output ? item->output_size : 0;
    if (item->output) memcpy(t->output, item->output, item->output_size);
    if (item->step > 0 && item->step % t->every == 0) {
        int rc = move(t, r);
        if (rc != 0) return rc;
    }
    cradle_replay_item again;
    int rc = cradle_replay_rerun(r, t->before, size, &again);
    if (rc != 0) return rc;
    t->reruns++;
    cradle_golden_result g = cradle_golden_compare(t->after, size, r->sim.state, size);
    if (!g.equal) return differ(t, r, true, t->after, size, r->sim.state, size, g.first_difference);
    size_t again_size = again.output ? again.output_size : 0;
    g = cradle_golden_compare(t->output, t->output_size, again.output, again_size);
    if (!g.equal) return differ(t, r, false, t->output, t->output_size, again.output, again_size, g.first_difference);
    uint8_t *next_before = t->after; /* the state before the next step */
    t->after = t->before;
    t->before = next_before;
    return 0;
}

int synctest_take(synctest *t, cradle_replay *r, const cradle_replay_item *item) {
    if (t->failed) return 1;
    switch (item->kind) {
    case CRADLE_REPLAY_STEP: return take_step(t, r, item);
    case CRADLE_REPLAY_RELOAD: /* the new build took the state over: its on_reload may have changed it */
        cradle_sim_save(&r->sim, t->before);
        return 0;
    case CRADLE_REPLAY_HASH:
    case CRADLE_REPLAY_TRAILER: return 0;
    }
    return 0;
}

static void print_bytes(FILE *to, const char *label, const uint8_t *bytes, size_t n, size_t offset) {
    fprintf(to, "  %-9s %2zu bytes from byte %zu:", label, n, offset);
    for (size_t i = 0; i < n; i++) fprintf(to, "%s%02x", i % 8 == 0 ? "  " : " ", bytes[i]);
    fputc('\n', to);
}

/* "0x2a", or what the run has instead of a byte there. */
static const char *byte_text(char *out, size_t size, const uint8_t *shown, size_t n, size_t run_size) {
    if (n > 0) snprintf(out, size, "0x%02x", shown[0]);
    else snprintf(out, size, "none (%zu bytes)", run_size);
    return out;
}

void synctest_print_failure(const synctest *t, FILE *to, const char *program) {
    const synctest_failure *f = &t->failure;
    if (!t->failed) return;
    char a[48], b[48];
    fprintf(to, "%s: sync test failed at step %" PRIu64 ": %s differs: first run %s, re-run %s\n", program,
            f->step, f->name,
            byte_text(a, sizeof a, f->first, f->first_shown, f->first_size),
            byte_text(b, sizeof b, f->rerun, f->rerun_shown, f->rerun_size));
    print_bytes(to, "first run", f->first, f->first_shown, f->offset);
    print_bytes(to, "re-run", f->rerun, f->rerun_shown, f->offset);
    fprintf(to, "  state hash: first run %016" PRIx64 ", re-run %016" PRIx64 "\n", f->first_hash, f->rerun_hash);
    if (f->moved)
        fprintf(to, "  the re-run ran with the state block moved to another address: does the state keep a "
                    "pointer (into itself, say)? Keep indices, offsets or handles instead\n");
    else if (f->state)
        fprintf(to, "  the same state and snapshot gave another state: does step() read something outside its "
                    "state block (a static or global variable, a clock, uninitialised memory)?\n");
    else
        fprintf(to, "  the same state gave other output bytes: does output() read something outside the "
                    "state block?\n");
}
