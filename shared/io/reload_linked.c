/*
 * reload_linked: reload.h for a program with its game linked in, built where
 * there is no dynamic loader (the browser's viewer, WebAssembly: see
 * client/web/). Opening CRADLE_RELOAD_LINKED gives the linked build's
 * contract, checked against the host's limits as reload.c checks a
 * library's; any other path is refused. A program holds one build: a
 * session's next build is another program, and the host that runs it hands
 * the state across (the page loads that build's module). Only open,
 * contract and close exist here; a host that polls for rebuilds links
 * reload.c.
 */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "cradle/contract.h"
#include "cradle/reload.h"

const cradle_game_contract *cradle_game_get_contract(void); /* the game linked in */

int cradle_reload_open(cradle_reload *r, const cradle_reload_config *config, uint64_t now_ns, char *message,
                       size_t message_size) {
    assert(r && config && config->path);
    (void)now_ns;
    memset(r, 0, sizeof *r);
    if (strcmp(config->path, CRADLE_RELOAD_LINKED) != 0) {
        if (message && message_size) snprintf(message, message_size, "%s: no such build here: this program runs "
                                                                     "only the build linked into it", config->path);
        return CRADLE_ERELOAD_OPEN;
    }
    const cradle_game_contract *g = cradle_game_get_contract();
    cradle_contract_limits limits = cradle_contract_host_limits();
    limits.max_state_align = config->max_state_align ? config->max_state_align : CRADLE_RELOAD_DEFAULT_MAX_ALIGN;
    limits.state_capacity = config->state_capacity;
    char scratch[CRADLE_RELOAD_MESSAGE_MAX];
    int rc = cradle_contract_check(g, &limits, message && message_size ? message : scratch,
                                   message && message_size ? message_size : sizeof scratch);
    if (rc != CRADLE_OK) return rc;
    snprintf(r->path, sizeof r->path, "%s", config->path);
    r->basename = r->path;
    r->contract = g;
    r->max_state_align = limits.max_state_align;
    r->state_capacity = config->state_capacity ? config->state_capacity : g->state_size;
    memcpy(r->game_name, g->name, cradle_contract_strnlen(g->name, CRADLE_GAME_NAME_MAX) + 1);
    r->input_bytes = g->input_bytes;
    r->max_players = g->max_players;
    r->steps_per_second = g->steps_per_second;
    r->source_frames_per_second = g->source_frames_per_second;
    return CRADLE_OK;
}

const cradle_game_contract *cradle_reload_contract(const cradle_reload *r) {
    assert(r && r->contract && "cradle_reload_open succeeded");
    return r->contract;
}

const char *cradle_reload_copy_path(const cradle_reload *r) {
    assert(r && r->contract && "cradle_reload_open succeeded");
    return r->path;
}

void cradle_reload_close(cradle_reload *r) {
    assert(r);
    r->contract = NULL;
}
