#include "cradle/sim_storage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/errors.h"
#include "cradle/hash.h"

static uint8_t *block(uint32_t align, uint32_t capacity) {
    size_t bytes = ((size_t)capacity + align - 1u) / align * align; /* aligned_alloc wants a multiple */
    return aligned_alloc(align, bytes);
}

int cradle_sim_storage_open(cradle_sim_storage *storage, cradle_sim *sim, const cradle_game_contract *contract,
                            const cradle_sim_storage_config *config, char *message, size_t message_size) {
    memset(storage, 0, sizeof *storage);
    uint32_t align = config->align ? config->align : contract->state_align;
    if (align < CRADLE_SIM_STORAGE_MIN_ALIGN) align = CRADLE_SIM_STORAGE_MIN_ALIGN;
    uint32_t capacity = config->capacity ? config->capacity : contract->state_size;
    storage->align = align;
    storage->capacity = capacity;
    storage->state = block(align, capacity);
    storage->previous = config->previous ? block(align, capacity) : NULL;
    storage->scratch = config->scratch ? block(align, capacity) : NULL;
    storage->events = config->event_capacity ? calloc(config->event_capacity, sizeof *storage->events) : NULL;
    if (!storage->state || (config->previous && !storage->previous) || (config->scratch && !storage->scratch) ||
        (config->event_capacity && !storage->events)) {
        cradle_sim_storage_close(storage);
        if (message && message_size) snprintf(message, message_size, "out of memory for a %u-byte state", capacity);
        return CRADLE_ENOMEM;
    }
    cradle_sim_config sc = {.state = storage->state,
                            .previous = storage->previous,
                            .scratch = storage->scratch,
                            .state_capacity = capacity,
                            .state_align = align,
                            .events = storage->events,
                            .event_capacity = config->event_capacity,
                            .hash = cradle_hash64};
    int rc = cradle_sim_init(sim, &sc, contract, message, message_size);
    if (rc != 0) cradle_sim_storage_close(storage);
    return rc;
}

void cradle_sim_storage_close(cradle_sim_storage *storage) {
    free(storage->state);
    free(storage->previous);
    free(storage->scratch);
    free(storage->events);
    storage->state = storage->previous = storage->scratch = NULL;
    storage->events = NULL;
}
