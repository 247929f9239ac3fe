#include "cradle/events.h"

#include <assert.h>

int cradle_events_init(cradle_event_queue *queue, cradle_event *storage, uint32_t capacity) {
    assert(queue != NULL);
    if (storage == NULL && capacity > 0) return CRADLE_EINVAL;
    *queue = (cradle_event_queue){.events = storage, .capacity = capacity};
    return 0;
}

void cradle_events_clear(cradle_event_queue *queue) {
    queue->count = 0;
    queue->dropped = 0;
    queue->invalid = 0;
}

bool cradle_events_push(cradle_event_queue *queue, const cradle_event *event) {
    /* The event comes from a game library: a bad one is refused and counted,
     * never asserted on. */
    if (event == NULL || event->kind == 0) {
        queue->invalid++;
        queue->invalid_total++;
        return false;
    }
    if (queue->count >= queue->capacity) {
        queue->dropped++;
        queue->dropped_total++;
        return false;
    }
    queue->events[queue->count++] = *event;
    queue->appended_total++;
    return true;
}

const cradle_event *cradle_events_at(const cradle_event_queue *queue, uint32_t i) {
    assert(i < queue->count);
    return &queue->events[i];
}

static bool sink_emit(void *context, const cradle_event *event) {
    return cradle_events_push(context, event);
}

cradle_event_sink cradle_events_sink(cradle_event_queue *queue) {
    return (cradle_event_sink){.context = queue, .emit = sink_emit};
}
