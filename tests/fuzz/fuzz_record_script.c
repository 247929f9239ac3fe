/*
 * fuzz_record_script: cradle-record's input script reader
 * (record_script_load, tools/record/record_script.c) on arbitrary bytes as
 * the file's text, for a game of 4 slots of 2 input bytes with 2 present.
 *
 * Nothing may crash, leak or read out of bounds. When the script is
 * accepted, what it says holds: entries are sorted by step, every slot is
 * below the game's slots, every line number is within the file, and the
 * presence the entries imply is consistent (a slot leaves only while
 * present, joins only while absent, gets input only while present).
 *
 * Seeds in corpus/record_script: the committed golden scripts' shapes and
 * small invalid ones, written by hand.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "record.h"

#define SLOTS 4u
#define INPUT_BYTES 2u
#define PRESENT 2u

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    /* The reader names each error on stderr: point the stream (not fd 2,
     * which libFuzzer and the sanitizers use) at /dev/null. */
    FILE *null = fopen("/dev/null", "w");
    if (!null) abort();
    stderr = null;
    snprintf(path, sizeof path, "/tmp/fuzz_record_script.%ld", (long)getpid());
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    if (fclose(f) != 0) abort();
    size_t lines = 1;
    for (size_t i = 0; i < size; i++) lines += data[i] == '\n';

    size_t count = 0;
    record_script_entry *entries = record_script_load(path, SLOTS, INPUT_BYTES, PRESENT, &count);
    unlink(path);
    if (!entries) return 0;
    bool present[SLOTS] = {true, true, false, false};
    for (size_t i = 0; i < count; i++) {
        const record_script_entry *e = &entries[i];
        if (e->slot >= SLOTS || e->line == 0 || e->line > lines) abort();
        if (i > 0 && e->step < entries[i - 1].step) abort();
        if (i > 0 && e->line <= entries[i - 1].line) abort();
        switch (e->action) {
        case RECORD_SCRIPT_SET: if (!present[e->slot]) abort(); break;
        case RECORD_SCRIPT_LEAVE: if (!present[e->slot]) abort(); present[e->slot] = false; break;
        case RECORD_SCRIPT_JOIN: if (present[e->slot]) abort(); present[e->slot] = true; break;
        default: abort();
        }
    }
    free(entries);
    return 0;
}
