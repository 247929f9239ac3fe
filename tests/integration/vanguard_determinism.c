/*
 * vanguard_determinism: runs vanguard from a fixed seed and a scripted input
 * (an input script from the session module, 4 players) and writes, or
 * compares with a file, the output() bytes of every step. Run it in two
 * processes (vanguard_determinism.sh does) to show that the output does not
 * depend on the process: no address, clock or uninitialised byte leaks in.
 *
 *   vanguard_determinism --write FILE   [--lib PATH] [--steps N]
 *   vanguard_determinism --compare FILE [--lib PATH] [--steps N]
 *
 * Without --lib it uses the statically linked game; with --lib it loads the
 * game's shared library with dlopen and looks up its contract, as a host
 * does. Exit status: 0 equal/written, 1 different, 2 usage or I/O error.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/cradle.h"
#include "vanguard_input.h"

CRADLE_GAME_EXPORT const cradle_game_contract *cradle_game_get_contract(void);

#define SEED 2024u
#define PLAYERS 4u

static int usage(void) {
    fprintf(stderr, "usage: vanguard_determinism (--write|--compare) FILE [--lib PATH] [--steps N]\n");
    return 2;
}

/* The script: each player's actions change every 4..35 steps; restart bits
 * are pulses (8 bits per slot, slot s at bits 8s..8s+7). */
static size_t make_script(cradle_input_script_change *script, size_t cap, uint64_t steps) {
    cradle_rng rng;
    cradle_rng_seed(&rng, 99, 3);
    size_t n = 0;
    for (uint64_t step = 0; step < steps && n < cap; step += 4 + cradle_rng_below(&rng, 32)) {
        uint64_t bits = 0;
        for (uint32_t slot = 0; slot < PLAYERS; slot++) {
            uint32_t a = cradle_rng_next(&rng) & 0x1Fu;
            if (cradle_rng_below(&rng, 3) != 0) a |= VANGUARD_FIRE;
            if (cradle_rng_below(&rng, 20) == 0) a |= VANGUARD_RESTART;
            bits |= (uint64_t)a << (8 * slot);
        }
        script[n++] = (cradle_input_script_change){.step = step, .bits = bits};
    }
    return n;
}

int main(int argc, char **argv) {
    const char *file = NULL, *lib = NULL;
    int write = -1;
    uint64_t steps = 3000;
    for (int i = 1; i < argc; i++) {
        if ((!strcmp(argv[i], "--write") || !strcmp(argv[i], "--compare")) && i + 1 < argc) {
            write = !strcmp(argv[i], "--write");
            file = argv[++i];
        } else if (!strcmp(argv[i], "--lib") && i + 1 < argc) {
            lib = argv[++i];
        } else if (!strcmp(argv[i], "--steps") && i + 1 < argc) {
            steps = strtoull(argv[++i], NULL, 10);
            if (steps == 0 || steps > 1000000) return usage();
        } else {
            return usage();
        }
    }
    if (write < 0) return usage();

    const cradle_game_contract *c = cradle_game_get_contract();
    void *handle = NULL;
    if (lib) {
        handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            fprintf(stderr, "vanguard_determinism: %s\n", dlerror());
            return 2;
        }
        cradle_game_contract_fn fn;
        void *sym = dlsym(handle, CRADLE_GAME_CONTRACT_SYMBOL);
        if (!sym) {
            fprintf(stderr, "vanguard_determinism: no contract in %s\n", lib);
            return 2;
        }
        memcpy(&fn, &sym, sizeof fn);
        c = fn();
    }
    if (strcmp(c->name, "vanguard") != 0 || c->max_players < PLAYERS) {
        fprintf(stderr, "vanguard_determinism: not the vanguard game\n");
        return 2;
    }

    int rc = 2;
    cradle_sim_storage storage = {0};
    uint32_t snap_size = cradle_snapshot_size(c->max_players, c->input_bytes);
    uint8_t *snap = calloc(1, snap_size);
    size_t out_cap = (size_t)steps * CRADLE_GAME_OUTPUT_MAX;
    uint8_t *out = malloc(out_cap);
    size_t script_cap = (size_t)steps / 4 + 1;
    cradle_input_script_change *script = malloc(script_cap * sizeof *script);
    uint8_t *ref = NULL;
    if (!snap || !out || !script) {
        fprintf(stderr, "vanguard_determinism: out of memory\n");
        goto out_free;
    }
    cradle_sim sim;
    if (cradle_sim_storage_open(&storage, &sim, c, &(cradle_sim_storage_config){0}, NULL, 0) != 0 ||
        cradle_sim_start(&sim, SEED, PLAYERS) != 0) {
        fprintf(stderr, "vanguard_determinism: init failed\n");
        goto out_free;
    }
    size_t n = make_script(script, script_cap, steps);
    uint64_t pulse = 0;
    for (uint32_t slot = 0; slot < PLAYERS; slot++) pulse |= (uint64_t)VANGUARD_RESTART << (8 * slot);
    size_t len = 0;
    for (uint64_t i = 0; i < steps; i++) {
        uint64_t bits = 0;
        if (cradle_input_script_at(script, n, pulse, i, &bits) != 0) goto out_free;
        memset(snap, 0, snap_size);
        for (uint32_t slot = 0; slot < PLAYERS; slot++) {
            snap[slot / 8] = (uint8_t)(snap[slot / 8] | (1u << (slot % 8)));
            uint8_t *in = snap + CRADLE_PRESENCE_BYTES(c->max_players) + slot * c->input_bytes;
            if (!vanguard_input_pack(in, c->input_bytes, (uint32_t)(bits >> (8 * slot)) & 0xFFu))
                goto out_free;
        }
        cradle_sim_step(&sim, snap);
        if (cradle_sim_output(&sim) != 0) goto out_free;
        memcpy(out + len, sim.output, sim.output_size);
        len += sim.output_size;
    }

    if (write) {
        FILE *f = fopen(file, "wb");
        if (!f || fwrite(out, 1, len, f) != len || fclose(f) != 0) {
            fprintf(stderr, "vanguard_determinism: cannot write %s\n", file);
            goto out_free;
        }
        printf("wrote %zu bytes (%" PRIu64 " steps) to %s\n", len, steps, file);
        rc = 0;
        goto out_free;
    }
    FILE *f = fopen(file, "rb");
    if (!f) {
        fprintf(stderr, "vanguard_determinism: cannot read %s\n", file);
        goto out_free;
    }
    ref = malloc(out_cap + 1);
    size_t ref_len = ref ? fread(ref, 1, out_cap + 1, f) : 0;
    fclose(f);
    if (!ref) goto out_free;
    cradle_golden_result r = cradle_golden_compare(ref, ref_len, out, len);
    if (r.equal) {
        printf("equal: %zu bytes (%" PRIu64 " steps)%s\n", len, steps, lib ? " via dlopen" : "");
        rc = 0;
    } else {
        size_t per_step = len / steps;
        printf("different: first differing byte %zu (step %zu), reference %zu bytes, output %zu bytes\n",
               r.first_difference, per_step ? r.first_difference / per_step : 0, r.reference_length,
               r.output_length);
        rc = 1;
    }
out_free:
    free(ref);
    free(script);
    free(out);
    free(snap);
    cradle_sim_storage_close(&storage);
    if (handle) dlclose(handle);
    return rc;
}
