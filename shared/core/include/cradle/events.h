#ifndef CRADLE_EVENTS_H
#define CRADLE_EVENTS_H
/*
 * events: the per-step buffer of cradle_event (the type is game_abi.h's) that
 * a simulation appends to and the presentation reads (the game's react()).
 *
 * A queue has a fixed capacity over caller storage. The host clears it at the
 * start of each step, hands cradle_events_sink(queue) to the game's step(),
 * then reads the events (count/at/data) and passes them to react(). Overflow is defined: an event appended to a full queue is dropped (the
 * ones already stored stay), and counted both for the current step and in
 * total. An event with kind 0 (reserved by the ABI) is refused and counted as
 * invalid, never stored. Nothing allocates.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"
#include "cradle/game_abi.h"

typedef struct cradle_event_queue {
    cradle_event *events;    /* caller's storage, capacity entries */
    uint32_t capacity;
    uint32_t count;          /* stored this step */
    uint32_t dropped;        /* dropped this step (queue full) */
    uint32_t invalid;        /* refused this step (kind 0) */
    uint64_t dropped_total;  /* since init */
    uint64_t invalid_total;  /* since init */
    uint64_t appended_total; /* stored since init */
} cradle_event_queue;

/* Makes an empty queue over storage (capacity entries; storage may be NULL
 * only when capacity is 0, a queue that drops everything). Returns 0 or
 * CRADLE_EINVAL. */
int cradle_events_init(cradle_event_queue *queue, cradle_event *storage, uint32_t capacity);

/* Start of a step: forgets the stored events and this step's counters (the
 * totals stay). */
void cradle_events_clear(cradle_event_queue *queue);

/* Appends a copy of event. Returns true when stored; false when it was
 * dropped (queue full) or refused (kind 0), each counted. */
bool cradle_events_push(cradle_event_queue *queue, const cradle_event *event);

static inline uint32_t cradle_events_count(const cradle_event_queue *queue) { return queue->count; }

/* The stored events of this step in append order (count of them). */
static inline const cradle_event *cradle_events_data(const cradle_event_queue *queue) {
    return queue->events;
}

/* Event i (< count; programmer error otherwise, asserts). */
const cradle_event *cradle_events_at(const cradle_event_queue *queue, uint32_t i);

/* Events dropped this step / since init because the queue was full. */
static inline uint32_t cradle_events_dropped(const cradle_event_queue *queue) {
    return queue->dropped;
}
static inline uint64_t cradle_events_dropped_total(const cradle_event_queue *queue) {
    return queue->dropped_total;
}

/* A sink for a game's step() whose emit() is cradle_events_push on queue.
 * The sink points at the queue: keep the queue alive while the game holds it. */
cradle_event_sink cradle_events_sink(cradle_event_queue *queue);

#endif
