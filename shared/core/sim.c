#include "cradle/sim.h"

#include "cradle/contract.h"
#include "cradle/internal.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

/* Whether the storage can hold the contract's state block. */
static int check_fit(uint32_t capacity, uint32_t align, const cradle_game_contract *c, char *message,
                     size_t message_size) {
    if (c->state_size > capacity)
        return cradle__say(CRADLE_ERELOAD_SIZE, message, message_size, "state size %u > capacity %u",
                   (unsigned)c->state_size, (unsigned)capacity);
    if (c->state_align > align)
        return cradle__say(CRADLE_ERELOAD_ALIGN, message, message_size, "state alignment %u > the storage's %u",
                   (unsigned)c->state_align, (unsigned)align);
    return CRADLE_OK;
}

int cradle_sim_init(cradle_sim *sim, const cradle_sim_config *config, const cradle_game_contract *contract,
                    char *message, size_t message_size) {
    assert(sim && config && contract && config->state && config->hash);
    assert(contract->step && contract->init && contract->source_frames_per_second > 0);
    memset(sim, 0, sizeof *sim);
    sim->state = config->state;
    sim->previous = config->previous;
    sim->scratch = config->scratch;
    sim->state_capacity = config->state_capacity ? config->state_capacity : contract->state_size;
    sim->state_align = config->state_align ? config->state_align : contract->state_align;
    assert(((uintptr_t)sim->state % sim->state_align) == 0 && "the storage has the alignment it claims");
    sim->scratch_capacity = sim->state_capacity;
    sim->scratch_align = sim->state_align;
    assert(((uintptr_t)sim->scratch % sim->scratch_align) == 0 && "the scratch has the state's alignment");
    sim->hash = config->hash;
    int rc = check_fit(sim->state_capacity, sim->state_align, contract, message, message_size);
    if (rc != CRADLE_OK) return rc;
    rc = cradle_events_init(&sim->events, config->events, config->events ? config->event_capacity : 0);
    assert(rc == CRADLE_OK);
    (void)rc;
    sim->contract = contract;
    size_t name_length = strlen(contract->name); /* checked: 1..CRADLE_GAME_NAME_MAX */
    assert(name_length < sizeof sim->game_name);
    memcpy(sim->game_name, contract->name, name_length + 1);
    sim->input_bytes = contract->input_bytes;
    sim->max_players = contract->max_players;
    sim->steps_per_second = contract->steps_per_second;
    sim->source_frames_per_second = contract->source_frames_per_second;
    sim->snapshot_size = cradle_snapshot_size(contract->max_players, contract->input_bytes);
    sim->steps_per_source_frame = contract->steps_per_second / contract->source_frames_per_second;
    memset(sim->state, 0, sim->state_capacity);
    if (message && message_size > 0) message[0] = '\0';
    return CRADLE_OK;
}

int cradle_sim_start(cradle_sim *sim, uint64_t seed, uint32_t player_count) {
    assert(sim && sim->contract);
    memset(sim->state, 0, sim->state_capacity);
    sim->next_step = 0;
    sim->has_previous = false;
    if (sim->contract->init(sim->state, seed, player_count) != 0) {
        memset(sim->state, 0, sim->state_capacity);
        return CRADLE_ESIM_INIT;
    }
    return CRADLE_OK;
}

int cradle_sim_restore(cradle_sim *sim, const void *state, size_t size, uint64_t next_step) {
    assert(sim && sim->contract && state);
    if (size != sim->contract->state_size) return CRADLE_ESIM_STATE;
    memcpy(sim->state, state, size);
    sim->next_step = next_step;
    sim->has_previous = false;
    return CRADLE_OK;
}

int cradle_sim_restore_storage(cradle_sim *sim, const void *storage, size_t size, uint64_t next_step) {
    assert(sim && sim->contract && storage);
    if (size < sim->contract->state_size) return CRADLE_ESIM_STATE;
    size_t n = size < sim->state_capacity ? size : sim->state_capacity;
    memcpy(sim->state, storage, n);
    memset((uint8_t *)sim->state + n, 0, sim->state_capacity - n);
    sim->next_step = next_step;
    sim->has_previous = false;
    return CRADLE_OK;
}

void cradle_sim_save(const cradle_sim *sim, void *out) {
    assert(sim && sim->contract && out);
    memcpy(out, sim->state, sim->contract->state_size);
}

/* The step a game receives for index: source frame and phase by the clock's
 * rules (clock.h). */
static cradle_game_step step_info(const cradle_sim *sim, uint64_t index, const uint8_t *snapshot) {
    return (cradle_game_step){
        .index = index,
        .source_frame = index / sim->steps_per_source_frame,
        .phase = (uint32_t)(index % sim->steps_per_source_frame),
        .snapshot_size = sim->snapshot_size,
        .snapshot = snapshot,
    };
}

void cradle_sim_step(cradle_sim *sim, const uint8_t *snapshot) {
    assert(sim && sim->contract && snapshot);
    if (sim->previous) {
        memcpy(sim->previous, sim->state, sim->contract->state_size);
        sim->has_previous = true;
    }
    cradle_events_clear(&sim->events);
    cradle_event_sink sink = cradle_events_sink(&sim->events);
    cradle_game_step step = step_info(sim, sim->next_step, snapshot);
    sim->contract->step(sim->state, &step, &sink);
    sim->next_step++;
    sim->steps_run++;
}

uint64_t cradle_sim_hash(const cradle_sim *sim) {
    assert(sim && sim->contract);
    return sim->hash(sim->state, sim->contract->state_size);
}

int cradle_sim_output(cradle_sim *sim) {
    assert(sim && sim->contract && sim->next_step > 0 && "a step has run");
    sim->output_size = 0;
    if (!sim->contract->output) return CRADLE_OK;
    size_t n = sim->contract->output(sim->state, sim->next_step - 1, sim->output, sizeof sim->output);
    if (n > sizeof sim->output) return CRADLE_ESIM_OUTPUT;
    sim->output_size = n;
    return CRADLE_OK;
}

int cradle_sim_move(cradle_sim *sim, void *storage, uint32_t capacity, uint32_t align, char *message,
                    size_t message_size) {
    assert(sim && sim->contract && storage && align > 0 && (align & (align - 1u)) == 0);
    assert(((uintptr_t)storage % align) == 0 && "the storage has the alignment it claims");
    int rc = check_fit(capacity, align, sim->contract, message, message_size);
    if (rc != CRADLE_OK) return rc;
    uint32_t kept = capacity < sim->state_capacity ? capacity : sim->state_capacity;
    memmove(storage, sim->state, kept);
    memset((uint8_t *)storage + kept, 0, capacity - kept);
    sim->state = storage;
    sim->state_capacity = capacity;
    sim->state_align = align;
    if (message && message_size > 0) message[0] = '\0';
    return CRADLE_OK;
}

/* Whether contract may take over the state: the same game, and it fits. */
static int check_takeover(const cradle_sim *sim, const cradle_game_contract *contract, char *message,
                          size_t message_size) {
    if (strcmp(contract->name, sim->game_name) != 0 || contract->input_bytes != sim->input_bytes ||
        contract->max_players != sim->max_players || contract->steps_per_second != sim->steps_per_second ||
        contract->source_frames_per_second != sim->source_frames_per_second)
        return cradle__say(CRADLE_ERELOAD_MISMATCH, message, message_size,
                   "build '%s' of game '%s' (%u players, %u input bytes, %u/%u steps/frames a second) "
                   "cannot take over from '%s' (%u, %u, %u/%u)",
                   contract->build_id, contract->name, (unsigned)contract->max_players,
                   (unsigned)contract->input_bytes, (unsigned)contract->steps_per_second,
                   (unsigned)contract->source_frames_per_second, sim->game_name, (unsigned)sim->max_players,
                   (unsigned)sim->input_bytes, (unsigned)sim->steps_per_second,
                   (unsigned)sim->source_frames_per_second);
    int rc = check_fit(sim->state_capacity, sim->state_align, contract, message, message_size);
    if (rc == CRADLE_OK && message && message_size > 0) message[0] = '\0';
    return rc;
}

int cradle_sim_swap(cradle_sim *sim, const cradle_game_contract *contract, char *message, size_t message_size) {
    assert(sim && sim->contract && contract && contract->step && contract->init);
    int rc = check_takeover(sim, contract, message, message_size);
    if (rc != CRADLE_OK) return rc;
    sim->contract = contract;
    if (contract->on_reload) contract->on_reload(sim->state);
    sim->swaps++;
    return CRADLE_OK;
}

int cradle_sim_rebind(cradle_sim *sim, const cradle_game_contract *contract, char *message,
                      size_t message_size) {
    assert(sim && sim->contract && contract && contract->step && contract->init);
    int rc = check_takeover(sim, contract, message, message_size);
    if (rc == CRADLE_OK) sim->contract = contract;
    return rc;
}

int cradle_sim_apply_data(cradle_sim *sim, uint32_t file, const uint8_t *bytes, uint32_t size,
                          cradle_data_refusal *refusal) {
    assert(sim && sim->contract && refusal && (bytes || size == 0));
    assert(sim->scratch && "a host that applies data gives the sim scratch storage");
    memset(refusal, 0, sizeof *refusal);
    uint32_t count = 0;
    const cradle_game_data_file *files = cradle_contract_data(sim->contract, &count);
    if (file >= count) {
        snprintf(refusal->message, sizeof refusal->message, "build '%s' declares %u data files, not file %u",
                 sim->contract->build_id, (unsigned)count, (unsigned)file + 1u);
        return CRADLE_EDATA;
    }
    if (size > files[file].max_bytes) {
        snprintf(refusal->message, sizeof refusal->message, "%u bytes > the game's limit of %u", (unsigned)size,
                 (unsigned)files[file].max_bytes);
        return CRADLE_EDATA;
    }
    uint32_t n = sim->contract->state_size;
    if (n > sim->scratch_capacity || sim->contract->state_align > sim->scratch_align) {
        snprintf(refusal->message, sizeof refusal->message,
                 "the state (%u bytes at %u) has outgrown the scratch storage (%u bytes at %u)", (unsigned)n,
                 (unsigned)sim->contract->state_align, (unsigned)sim->scratch_capacity, (unsigned)sim->scratch_align);
        return CRADLE_EDATA;
    }
    memcpy(sim->scratch, sim->state, n);
    static const uint8_t empty[1] = {0};
    bool accepted = sim->contract->data(sim->scratch, file, size ? bytes : empty, size, refusal);
    if (!accepted) {
        /* The game's words reach a terminal and a log: printable, never empty. */
        refusal->message[sizeof refusal->message - 1] = '\0';
        for (char *p = refusal->message; *p; p++)
            if ((unsigned char)*p < 0x20u || (unsigned char)*p > 0x7eu) *p = '?';
        if (!refusal->message[0]) snprintf(refusal->message, sizeof refusal->message, "refused (no reason given)");
        return CRADLE_EDATA_REFUSED;
    }
    memcpy(sim->state, sim->scratch, n);
    sim->data_applied++;
    memset(refusal, 0, sizeof *refusal);
    return CRADLE_OK;
}
