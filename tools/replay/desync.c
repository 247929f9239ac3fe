/*
 * desync: the state a client reported against the one the log (or a re-run
 * of the report) gives, field by field (see desync.h).
 */
#include "desync.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/contract.h"
#include "cradle/cradle.h"
#include "cradle/desync_report.h"
#include "cradle/layout.h"
#include "cradle/os.h"

#define FIELDS_SHOWN 32u
#define VALUE_BYTES 8u
#define REPORT_FILE_MAX ((size_t)2 * CRADLE_DESYNC_REPORT_STATE_MAX + ((size_t)64 << 20))

static uint8_t *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cradle-replay: --desync %s: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *bytes = malloc(cap);
    while (bytes) {
        n += fread(bytes + n, 1, cap - n, f);
        if (n < cap) break;
        if (cap >= REPORT_FILE_MAX) {
            fprintf(stderr, "cradle-replay: --desync %s: larger than a report may be\n", path);
            free(bytes);
            bytes = NULL;
            break;
        }
        uint8_t *grown = realloc(bytes, cap * 2);
        if (!grown) free(bytes);
        bytes = grown;
        cap *= 2;
    }
    if (bytes && ferror(f)) {
        fprintf(stderr, "cradle-replay: --desync %s: cannot read it\n", path);
        free(bytes);
        bytes = NULL;
    }
    fclose(f);
    *size = n;
    return bytes;
}

/* The field of a byte: its layout path without "+k (state byte N)", or ""
 * for a byte no region names. */
static void field_of(const cradle_state_region *layout, uint32_t count, uint64_t offset, char *out, size_t size) {
    cradle_layout_name(layout, count, offset, out, size);
    char *cut = strstr(out, " (state byte ");
    if (!cut) {
        out[0] = '\0';
        return;
    }
    *cut = '\0';
    char *plus = strrchr(out, '+');
    if (plus) *plus = '\0';
}

static void hex(const uint8_t *bytes, size_t n, char *out) {
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15u];
    }
    out[2 * n] = '\0';
}

typedef struct diff_printer {
    const uint8_t *server, *client;
    bool json;
    uint64_t fields;
} diff_printer;

/* One field's differing bytes first..last (up to VALUE_BYTES shown). */
static void emit(diff_printer *p, const char *field, uint64_t first, uint64_t last) {
    if (p->fields++ >= FIELDS_SHOWN) return;
    size_t n = (size_t)(last - first + 1 < VALUE_BYTES ? last - first + 1 : VALUE_BYTES);
    char server[2 * VALUE_BYTES + 1], client[2 * VALUE_BYTES + 1], label[300];
    hex(p->server + first, n, server);
    hex(p->client + first, n, client);
    snprintf(label, sizeof label, "%s", field[0] ? field : "(no field)");
    if (p->json)
        printf("%s{\"field\":\"%s\",\"first_byte\":%" PRIu64 ",\"last_byte\":%" PRIu64
               ",\"server\":\"%s\",\"client\":\"%s\"}",
               p->fields > 1 ? "," : "", label, first, last, server, client);
    else
        printf("  %-32s state bytes %" PRIu64 "..%" PRIu64 ": server %s, client %s\n", label, first, last, server,
               client);
}

/* Prints the differing fields of the server's (reproduced) and the
 * client's state, the differing bytes of one field (or a run of unnamed
 * ones) together. Returns the number of differing bytes. */
static uint64_t compare_states(const cradle_game_contract *c, const cradle_desync_report *rep,
                               const uint8_t *reproduced, bool json) {
    uint32_t count = 0;
    const cradle_state_region *layout = cradle_contract_layout(c, &count);
    diff_printer p = {.server = reproduced, .client = rep->client_state, .json = json};
    uint64_t differing = 0, first = 0, last = 0;
    char current[256] = "", name[256];
    bool open = false;
    for (uint64_t i = 0; i < rep->state_size; i++) {
        if (reproduced[i] == rep->client_state[i]) continue;
        differing++;
        field_of(layout, count, i, name, sizeof name);
        bool same = open && strcmp(name, current) == 0 && (name[0] || i == last + 1);
        if (same) {
            last = i;
            continue;
        }
        if (open) emit(&p, current, first, last);
        snprintf(current, sizeof current, "%s", name);
        first = last = i;
        open = true;
    }
    if (open) emit(&p, current, first, last);
    if (!json && p.fields > FIELDS_SHOWN) printf("  ... and %" PRIu64 " more fields\n", p.fields - FIELDS_SHOWN);
    if (json) printf("],\"fields_differing\":%" PRIu64 ",\"bytes_differing\":%" PRIu64, p.fields, differing);
    return differing;
}

/* text as a JSON string (the report's game and build are printable ASCII,
 * but may hold quotes). */
static void print_json_string(const char *text) {
    char buffer[2 * CRADLE_GAME_BUILD_ID_MAX + 16];
    cradle_writer w;
    cradle_writer_init(&w, buffer, sizeof buffer);
    cradle_writer_json_string(&w, text, strlen(text));
    fwrite(buffer, 1, w.length, stdout);
}

static void print_head(const cradle_desync_report *rep, const char *how, bool json) {
    if (json) {
        printf("{\"event\":\"desync\",\"step\":%" PRIu64 ",\"game\":", rep->step);
        print_json_string(rep->game);
        printf(",\"build\":");
        print_json_string(rep->build);
        printf(",\"reproduced_by\":\"%s\",\"fields\":[", how);
    } else {
        printf("desync at step %" PRIu64 " (%s build %s): the server's state (%s) against the client's:\n",
               rep->step, rep->game, rep->build, how);
    }
}

static int finish(const cradle_desync_report *rep, uint64_t differing, bool json) {
    if (json) printf("}\n");
    else if (differing == 0)
        printf("  the states are equal: the hashes differed for another reason (a hash from another build?)\n");
    else
        printf("%" PRIu64 " of %u state bytes differ\n", differing, (unsigned)rep->state_size);
    return differing ? 0 : 1;
}

/* The state the server kept when the client reported the desync
 * (<log>.desync-<step>.state, state_size bytes), or NULL. */
static uint8_t *kept_state(const desync_options *o, const cradle_desync_report *rep) {
    char path[4200];
    snprintf(path, sizeof path, "%s.desync-%" PRIu64 ".state", o->log, rep->step);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *state = malloc((size_t)rep->state_size + 1u);
    size_t n = state ? fread(state, 1, (size_t)rep->state_size + 1u, f) : 0;
    fclose(f);
    if (state && n == rep->state_size) return state;
    fprintf(stderr, "cradle-replay: --desync: %s is not a %u-byte state: ignored\n", path, (unsigned)rep->state_size);
    free(state);
    return NULL;
}

/* The server's state after the report's step: the one it kept at the
 * report (exact, whatever the game does), else the log replayed to it
 * (exact for a deterministic game). */
static int from_log(const desync_options *o, const cradle_desync_report *rep) {
    static cradle_replay replay;
    static cradle_replay_index index;
    cradle_replay_config config = {.log_path = o->log, .game_path = o->game, .force = o->force};
    int status = 1;
    uint8_t *kept = kept_state(o, rep);
    if (cradle_replay_open(&replay, &config) != 0) {
        fprintf(stderr, "cradle-replay: --desync: %s\n", replay.message);
        goto out;
    }
    if (!kept) { /* from the keyframe before the step, when the log has an index */
        char why[1024];
        int outcome = cradle_replay_attach_index(&replay, &index, NULL, CRADLE_REPLAY_INDEX_REBUILD, why, sizeof why);
        if (outcome < 0) {
            fprintf(stderr, "cradle-replay: --desync: keyframe index: %s\n", why);
            goto out;
        }
        if (outcome == CRADLE_REPLAY_INDEX_REBUILT || (outcome == CRADLE_REPLAY_INDEX_ABSENT && why[0]))
            fprintf(stderr, "cradle-replay: --desync: keyframe index: %s\n", why);
        if (cradle_replay_seek(&replay, rep->step + 1) != 0) {
            fprintf(stderr, "cradle-replay: --desync: %s\n", replay.message);
            goto out;
        }
        if (replay.keyframe_seeks)
            fprintf(stderr, "cradle-replay: --desync: from the keyframe after step %" PRIu64 " (the log's index)\n",
                    cradle_replay_index_find(&index, rep->step + 1)->key.step);
    }
    const cradle_game_contract *c = replay.sim.contract;
    if (strcmp(c->name, rep->game) != 0 && !o->force) {
        fprintf(stderr, "cradle-replay: --desync: the report is of game '%s', the log of '%s' (--force to compare)\n",
                rep->game, c->name);
        goto out;
    }
    if (c->state_size != rep->state_size) {
        fprintf(stderr, "cradle-replay: --desync: the report's state is %u bytes, the log's build's %u\n",
                (unsigned)rep->state_size, (unsigned)c->state_size);
        goto out;
    }
    const uint8_t *server = kept ? kept : replay.sim.state;
    uint64_t hash = cradle_hash64(server, rep->state_size);
    if (hash != rep->server_hash)
        fprintf(stderr, "cradle-replay: --desync: warning: the %s state at step %" PRIu64
                        " hashes to %016" PRIx64 ", the report's server hash is %016" PRIx64
                        " (%s)\n",
                kept ? "kept" : "replayed", rep->step, hash, rep->server_hash,
                kept ? "another session's file?" : "the game does not replay its own log: run --synctest");
    print_head(rep, kept ? "the server's kept state" : "the log replayed", o->json);
    status = finish(rep, compare_states(c, rep, server, o->json), o->json);
out:
    free(kept);
    cradle_replay_close(&replay);
    cradle_replay_index_free(&index);
    return status;
}

/* The report's base state through its snapshots with --game. */
static int rerun(const desync_options *o, const cradle_desync_report *rep) {
    if (!o->game) {
        fprintf(stderr, "cradle-replay: --desync without a LOG needs --game LIB to re-run the report\n");
        return 1;
    }
    if (rep->truncated) {
        fprintf(stderr, "cradle-replay: --desync: the report's history is truncated (%" PRIu64
                        " snapshots): give the server's LOG\n", rep->snapshots);
        return 1;
    }
    static cradle_reload lib;
    char msg[CRADLE_RELOAD_MESSAGE_MAX];
    cradle_reload_config rc = {.path = o->game, .copy_dir = cradle_os_tmpdir(), .state_capacity = rep->state_size};
    if (cradle_reload_open(&lib, &rc, cradle_mono_ns(), msg, sizeof msg) != 0) {
        fprintf(stderr, "cradle-replay: --desync: %s: %s\n", o->game, msg);
        return 1;
    }
    const cradle_game_contract *c = cradle_reload_contract(&lib);
    int status = 1;
    cradle_sim_storage storage = {0};
    if ((strcmp(c->name, rep->game) != 0 || strcmp(c->build_id, rep->build) != 0) && !o->force) {
        fprintf(stderr, "cradle-replay: --desync: the report is of %s build %s, --game is %s build %s (--force)\n",
                rep->game, rep->build, c->name, c->build_id);
        goto out;
    }
    cradle_sim sim;
    if (cradle_sim_storage_open(&storage, &sim, c, &(cradle_sim_storage_config){.capacity = rep->state_size}, msg,
                                sizeof msg) != 0 ||
        cradle_sim_restore(&sim, rep->base, rep->state_size, (uint64_t)(rep->base_step + 1)) != 0) {
        fprintf(stderr, "cradle-replay: --desync: cannot start from the report's base state: %s\n", msg);
        goto out;
    }
    if (sim.snapshot_size != rep->snapshot_size) {
        fprintf(stderr, "cradle-replay: --desync: snapshots of %u bytes, the game's are %u\n",
                (unsigned)rep->snapshot_size, (unsigned)sim.snapshot_size);
        goto out;
    }
    for (uint64_t s = 0; s < rep->snapshots; s++) cradle_sim_step(&sim, rep->snapshot_data + s * rep->snapshot_size);
    print_head(rep, "the report re-run", o->json);
    status = finish(rep, compare_states(c, rep, sim.state, o->json), o->json);
out:
    cradle_sim_storage_close(&storage);
    cradle_reload_close(&lib);
    return status;
}

int replay_desync(const desync_options *o) {
    size_t size = 0;
    uint8_t *bytes = read_file(o->report, &size);
    if (!bytes) return 1;
    cradle_desync_report rep;
    char message[CRADLE_DESYNC_REPORT_MESSAGE_MAX];
    int status = 1;
    if (cradle_desync_report_parse(&rep, bytes, size, message, sizeof message) != 0)
        fprintf(stderr, "cradle-replay: --desync %s: %s\n", o->report, message);
    else
        status = o->log ? from_log(o, &rep) : rerun(o, &rep);
    free(bytes);
    return status;
}
