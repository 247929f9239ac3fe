#ifndef CRADLE_REPLAY_DESYNC_H
#define CRADLE_REPLAY_DESYNC_H
/*
 * desync: cradle-replay --desync REPORT [LOG]. A client's desync report
 * (cradle/desync_report.h) holds its state at the first step whose hash
 * differs from the server's. With the server's LOG the server's state at
 * that step is reproduced by replaying the log; without one, the report's
 * base state is run through its snapshots with --game LIB. The two states
 * are compared and the differing bytes named by field (cradle/layout.h,
 * when the game describes its state), grouped, both values shown.
 */
#include <stdbool.h>

typedef struct desync_options {
    const char *report;
    const char *log;  /* NULL: re-run the report with game */
    const char *game; /* NULL: the build the log archived */
    bool force, json;
} desync_options;

/* Runs the analysis and prints it. Returns the exit status: 0 when it named
 * the differing fields, 1 when the states agree or it could not run (said
 * on stderr). */
int replay_desync(const desync_options *o);

#endif
