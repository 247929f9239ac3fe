#ifndef CRADLE_TOOLS_SECOND_RUN_H
#define CRADLE_TOOLS_SECOND_RUN_H
/*
 * second_run: the sync test's replay in a second process. cradle-replay
 * --synctest starts itself again as a plain replay of the same log
 * (`cradle-replay --output - LOG`, from /proc/self/exe) and compares that
 * process's output bytes with its own, step by step: a game whose output
 * depends on its process (an address, uninitialised memory, a pid) differs
 * there even when every step agrees with its own re-run.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

typedef struct second_run {
    pid_t pid;
    FILE *in;            /* the second process's output */
    uint64_t offset;     /* output bytes compared so far */
    bool differs;
    uint64_t step, byte; /* where: the step and the output byte of the whole replay */
} second_run;

/* Starts the second process, replaying steps from..to (UINT64_MAX: the
 * end) as the first does. Returns 0, or -1 with why on stderr. */
int second_run_open(second_run *s, const char *log, const char *game, bool force, uint64_t from, uint64_t to);

/* Compares step's output (n bytes) with the second process's next n bytes.
 * Returns 0, or 1 when they differ (s->differs, s->step, s->byte). */
int second_run_compare(second_run *s, uint64_t step, const uint8_t *out, size_t n);

/* Checks that the second process wrote no more output (unless `stop`: the
 * first run stopped early, and the second is ended) and reaps it; its exit
 * status is the log's verdict, which the first process reports itself.
 * Returns 0, or 1 with what differed in message. */
int second_run_close(second_run *s, bool stop, char *message, size_t message_size);

#endif
