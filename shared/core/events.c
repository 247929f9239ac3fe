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

int cradle_events_bus_init(cradle_event_bus *bus, cradle_event_subscription *storage,
                           uint32_t capacity) {
    assert(bus != NULL);
    if (storage == NULL && capacity > 0) return CRADLE_EINVAL;
    *bus = (cradle_event_bus){.subscriptions = storage, .capacity = capacity};
    return 0;
}

int cradle_events_subscribe(cradle_event_bus *bus, uint16_t kind, cradle_event_handler handler,
                            void *context) {
    assert(handler != NULL);
    if (bus->count >= bus->capacity) return CRADLE_EFULL;
    bus->subscriptions[bus->count++] =
        (cradle_event_subscription){.handler = handler, .context = context, .kind = kind};
    return 0;
}

void cradle_events_dispatch(const cradle_event_bus *bus, const cradle_event *events,
                            uint32_t count) {
    for (uint32_t i = 0; i < count; i++) {
        for (uint32_t s = 0; s < bus->count; s++) {
            const cradle_event_subscription *sub = &bus->subscriptions[s];
            if (sub->kind == CRADLE_EVENTS_ANY || sub->kind == events[i].kind) {
                sub->handler(sub->context, &events[i]);
            }
        }
    }
}
