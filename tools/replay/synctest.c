/* cradle-replay --synctest: each step run again by a twin of the replay's state (synctest.h). */
#define _GNU_SOURCE /* sched_getaffinity: the CPUs this process may run on */
#include "synctest.h"

#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cradle/layout.h"

#define BLOCK_ALIGN CRADLE_RELOAD_DEFAULT_MAX_ALIGN

/* A block: capacity bytes at up to 64 into it, rounded up to the alignment
 * as aligned_alloc() asks. */
static size_t block_bytes(uint32_t capacity) {
    return ((size_t)capacity + 2u * BLOCK_ALIGN - 1u) / BLOCK_ALIGN * BLOCK_ALIGN;
}

/* Where the twin lives in its block: at the build's alignment past a
 * 64-byte boundary, so its address is no more aligned than the contract
 * asks (unless it asks the most). */
static uint32_t twin_offset(const cradle_sim *sim) {
    uint32_t align = sim->contract->state_align;
    return align < BLOCK_ALIGN ? align : BLOCK_ALIGN;
}

/* (Re)starts the twin as a copy of the driver's state. */
static int start_twin(synctest *t, cradle_replay *r) {
    uint32_t offset = twin_offset(&r->sim);
    int rc = cradle_twin_init(&t->twin, &r->sim, t->twin_block + offset, t->capacity, offset, r->message,
                              sizeof r->message);
    return rc;
}

/* ---- the second thread ---- */

#define SPINS 4000u /* polls before a wait yields the core (a step is tens of microseconds) */

/* Waits until counter reaches value. */
static void await(_Atomic uint64_t *counter, uint64_t value) {
    for (unsigned spins = 0; atomic_load_explicit(counter, memory_order_acquire) < value; spins++)
        if (spins >= SPINS) sched_yield();
}

static void *worker_main(void *arg) {
    synctest *t = arg;
    synctest_worker *w = &t->worker;
    for (uint64_t next = 1;; next++) {
        await(&w->posted, next);
        if (w->job == SYNCTEST_JOB_QUIT) return NULL;
        w->equal = cradle_twin_part_equal(&t->twin, w->first, w->from, w->to); /* reads only */
        atomic_store_explicit(&w->done, next, memory_order_release);
    }
}

/* Hands the worker its next job (it is idle: every job is waited for). */
static void post(synctest_worker *w, synctest_job job) {
    w->job = job;
    atomic_store_explicit(&w->posted, atomic_load_explicit(&w->posted, memory_order_relaxed) + 1u,
                          memory_order_release);
}

static void finish(synctest_worker *w) { await(&w->done, atomic_load_explicit(&w->posted, memory_order_relaxed)); }

/* The CPUs this process may run on (taskset, a container's cpuset). */
static int usable_cpus(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
    return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

/* The second thread, for the compare, when two cores and the state make it worth it. */
static void start_worker(synctest *t, const cradle_replay *r) {
    if (usable_cpus() < 2 || cradle_sim_state_size(&r->sim) < SYNCTEST_PARALLEL_MIN) return;
    atomic_init(&t->worker.posted, 0);
    atomic_init(&t->worker.done, 0);
    t->worker.started = pthread_create(&t->worker.thread, NULL, worker_main, t) == 0;
}

/* The twin's step, after the driver's on this thread (synctest.h: the game
 * never runs on two threads at once), and the state compare: in halves on
 * both threads when the worker runs, then the output. */
static bool twin_run_and_check(synctest *t, cradle_replay *r, const cradle_replay_item *item) {
    synctest_worker *w = &t->worker;
    const uint8_t *output = item->output;
    size_t output_size = item->output ? item->output_size : 0;
    cradle_twin_step(&t->twin, item->snapshot);
    if (!w->started) return cradle_twin_check(&t->twin, &r->sim, output, output_size);
    size_t size = cradle_sim_state_size(&r->sim), half = size / 2u;
    w->first = &r->sim;
    w->from = half;
    w->to = size;
    post(w, SYNCTEST_JOB_COMPARE);
    bool equal = cradle_twin_part_equal(&t->twin, &r->sim, 0, half);
    finish(w);
    if (!equal || !w->equal) return cradle_twin_check(&t->twin, &r->sim, output, output_size); /* names the byte */
    return cradle_twin_check_output(&t->twin, &r->sim, output, output_size);
}

int synctest_open(synctest *t, cradle_replay *r, uint64_t every) {
    memset(t, 0, sizeof *t);
    t->every = every ? every : SYNCTEST_DEFAULT_EVERY;
    t->capacity = r->capacity;
    t->twin_block = aligned_alloc(BLOCK_ALIGN, block_bytes(t->capacity));
    t->block = aligned_alloc(BLOCK_ALIGN, block_bytes(t->capacity));
    if (!t->twin_block || !t->block) {
        synctest_close(t);
        return CRADLE_ENOMEM;
    }
    int rc = start_twin(t, r);
    if (rc != 0) {
        synctest_close(t);
        return rc;
    }
    start_worker(t, r);
    return 0;
}

void synctest_close(synctest *t) {
    synctest_worker *w = &t->worker;
    if (w->started) {
        post(w, SYNCTEST_JOB_QUIT); /* idle: every compare is waited for */
        pthread_join(w->thread, NULL);
        w->started = false;
    }
    free(t->twin_block);
    free(t->block);
    t->twin_block = t->block = NULL;
}

/* Moves the driver's state to the other storage: the second block, at an
 * offset of the build's alignment, or back to the driver's own. */
static int move(synctest *t, cradle_replay *r) {
    int rc = t->away ? cradle_replay_move(r, NULL, 0)
                     : cradle_replay_move(r, t->block + twin_offset(&r->sim), t->capacity);
    if (rc != 0) return rc;
    t->away = !t->away;
    t->moves++;
    return 0;
}

/* The twin's difference as the failure. */
static void take_difference(synctest *t) {
    const cradle_twin_difference *d = &t->twin.difference;
    synctest_failure *f = &t->failure;
    *f = (synctest_failure){.step = d->step,
                            .state = d->state,
                            .offset = d->offset,
                            .first_size = d->first_size,
                            .rerun_size = d->twin_size,
                            .first_shown = d->first_shown,
                            .rerun_shown = d->twin_shown,
                            .first_hash = d->first_hash,
                            .rerun_hash = d->twin_hash};
    _Static_assert(sizeof f->name == sizeof d->name && sizeof f->first == sizeof d->first, "same shapes");
    memcpy(f->name, d->name, sizeof f->name);
    memcpy(f->first, d->first, sizeof f->first);
    memcpy(f->rerun, d->twin, sizeof f->rerun);
    t->failed = true;
}

/* Seeks the replay back before the failing step and runs it twice at one
 * address (cradle_replay_rerun): equal runs there mean only the twin,
 * elsewhere, differed, so the state depends on where it lives. The blocks
 * are free for it: the twin failed and the seek brings the state home. */
static void classify(synctest *t, cradle_replay *r) {
    static uint8_t first_output[CRADLE_GAME_OUTPUT_MAX];
    synctest_failure *f = &t->failure;
    uint8_t *before = t->twin_block, *after = t->block;
    if (cradle_replay_seek(r, f->step) != 0) return;
    t->away = false;
    cradle_sim_save(&r->sim, before);
    cradle_replay_item item;
    int rc;
    while ((rc = cradle_replay_next(r, &item)) == 1 && item.kind != CRADLE_REPLAY_STEP)
        if (item.kind == CRADLE_REPLAY_RELOAD) cradle_sim_save(&r->sim, before);
    if (rc != 1 || item.step != f->step) return;
    uint32_t size = cradle_sim_state_size(&r->sim);
    cradle_sim_save(&r->sim, after);
    size_t first_output_size = item.output ? item.output_size : 0;
    if (item.output) memcpy(first_output, item.output, first_output_size);
    cradle_replay_item again;
    if (cradle_replay_rerun(r, before, size, &again) != 0) return;
    size_t again_size = again.output ? again.output_size : 0;
    bool same_state = memcmp(after, r->sim.state, size) == 0;
    bool same_output = first_output_size == again_size && memcmp(first_output, again.output, again_size) == 0;
    f->classified = true;
    f->moved = same_state && same_output;
}

/* A step next() just ran: the twin runs it too and the two are compared;
 * the driver's state moves when its turn comes. */
static int take_step(synctest *t, cradle_replay *r, const cradle_replay_item *item) {
    t->reruns++;
    if (!twin_run_and_check(t, r, item)) {
        take_difference(t);
        classify(t, r);
        return 1;
    }
    if (item->step > 0 && item->step % t->every == 0) return move(t, r);
    return 0;
}

int synctest_take(synctest *t, cradle_replay *r, const cradle_replay_item *item) {
    if (t->failed) return 1;
    switch (item->kind) {
    case CRADLE_REPLAY_STEP: return take_step(t, r, item);
    case CRADLE_REPLAY_RELOAD: /* the new build took the state over: its on_reload may have changed it */
    case CRADLE_REPLAY_DATA:   /* a data file changed the state: the twin starts from it */
        return start_twin(t, r);
    case CRADLE_REPLAY_HASH:
    case CRADLE_REPLAY_TRAILER:
    case CRADLE_REPLAY_REFUSED: return 0;
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
    fprintf(to, "  the re-run ran on a copy of the state at another address%s\n",
            f->classified ? (f->moved ? "; run twice at one address, the step agrees with itself"
                                      : "; run twice at one address, it differs too")
                          : "");
    if (f->moved)
        fprintf(to, "  the state depends on its address: does it keep a pointer (into itself, say)? Keep "
                    "indices, offsets or handles instead\n");
    else if (f->state)
        fprintf(to, "  the same state and snapshot gave another state: does step() read something outside its "
                    "state block (a static or global variable, a clock, uninitialised memory)?\n");
    else
        fprintf(to, "  the same state gave other output bytes: does output() read something outside the "
                    "state block?\n");
}
