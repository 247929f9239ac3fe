#ifndef CRADLE_REPLAY_BROADCAST_FETCH_H
#define CRADLE_REPLAY_BROADCAST_FETCH_H
/*
 * broadcast_fetch: cradle-replay URL. The broadcast's start document and
 * every fragment from 0 on (broadcast.h), concatenated, are the server's
 * session log: a mirror (broadcast_mirror.h) fetches and checks them into
 * a temporary folder, with the data files they name, until the broadcast
 * has ended (or, for one still live, until the mirror holds every fragment
 * published so far); the log is then replayed like any other.
 */
#include <stddef.h>

typedef struct broadcast_fetch {
    char dir[4096];       /* the temporary folder; "" when none */
    char log[4200];       /* the fetched log */
    unsigned long long fragments, bytes;
    int ended;            /* the log holds the broadcast's end (its trailer) */
} broadcast_fetch;

/* Fetches url into f; with a verify_key (an Ed25519 public key, or NULL)
 * every block must be signed by it (broadcast.h, "Signing"). Returns 0, or
 * 1 with a message naming what failed. */
int broadcast_fetch_run(broadcast_fetch *f, const char *url, const unsigned char *verify_key, char *message,
                        size_t message_size);

/* Removes the temporary folder. */
void broadcast_fetch_clean(broadcast_fetch *f);

#endif
