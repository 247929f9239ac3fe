#ifndef CRADLE_SERVER_HANDSHAKE_H
#define CRADLE_SERVER_HANDSHAKE_H
/*
 * handshake: cradle-server's decision on the first packet of a peer in
 * secure mode (net.h), without ENet: the packet must be a plaintext HELLO of
 * this protocol whose credential (token.h: token || the client's ephemeral
 * X25519 key) verifies for this server and build at now_unix.
 *
 * The decision, in order:
 *   longer than max_bytes, not decodable, or not a HELLO   IGNORE
 *   a HELLO of another protocol version                    REFUSE protocol, plaintext
 *   credential shorter than a token and a key              REFUSE auth, plaintext,
 *                                                          bad_credential
 *   the client key is degenerate (no session keys)         DROP, bad_credential
 *   the token fails cradle_token_verify                    REFUSE, sealed: build
 *                                                          (CRADLE_ETOKEN_BUILD, the
 *                                                          text names both builds) or
 *                                                          auth (the text is the error's
 *                                                          name, e.g. "token_expired")
 *   else                                                   ADMIT, token consumed
 * A plaintext REFUSE is all a peer without keys can read; once the session
 * keys exist every reply is sealed, so only the holder of the server's secret
 * key could have written it. No reply text is cut here: the caller fits the
 * REFUSE to the HELLO's size.
 *
 * Pure apart from libsodium: the time is a parameter; the verifier's stats
 * count every token outcome.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/keys.h"
#include "cradle/secure.h"
#include "cradle/token.h"
#include "cradle/wire.h"

typedef enum cradle_handshake_action {
    CRADLE_HANDSHAKE_IGNORE = 0, /* not a HELLO: no reply, the peer stays unauthenticated */
    CRADLE_HANDSHAKE_ADMIT = 1,  /* token verified: *session is ready */
    CRADLE_HANDSHAKE_REFUSE = 2, /* send REFUSE (reason, text), then disconnect */
    CRADLE_HANDSHAKE_DROP = 3,   /* disconnect at once, no reply: nothing to seal it with */
} cradle_handshake_action;

/* Zero means default where noted. */
typedef struct cradle_handshake_config {
    cradle_token_verifier *verifier; /* trusted issuers, this server, this build; consumes tokens */
    const cradle_keys *keys;         /* the server's long-term kx pair */
    uint64_t context;                /* bound into the session (ENet's connectID) */
    uint64_t now_unix;               /* tokens are checked at this time */
    size_t max_bytes;                /* longer packets are not decoded; 0 = CRADLE_WIRE_MESSAGE_MAX */
    const char *game;                /* the game hosted: a genuine token of another build whose
                                        HELLO names another game is refused as that (game); NULL:
                                        not checked */
} cradle_handshake_config;

typedef struct cradle_handshake_result {
    cradle_handshake_action action;
    bool hello;          /* the packet was a HELLO (any version): its size caps the replies */
    bool sealed;         /* REFUSE: seal it with *session (keys exist); plaintext otherwise */
    bool bad_credential; /* count it: credential too short, or a degenerate key */
    int error;           /* why: 0 (ADMIT), the decode or token error, CRADLE_ENET_AUTH */
    uint8_t reason;      /* REFUSE: cradle_wire_refusal */
    char text[CRADLE_WIRE_TEXT_MAX + 1]; /* REFUSE: the text, printable ASCII */
    cradle_token token;  /* ADMIT: the verified token's fields */
    cradle_wire_hello request; /* ADMIT: the HELLO, decoded */
} cradle_handshake_result;

/* Decides on the size untrusted bytes at data, a peer's first packet. The
 * session is initialised (cradle_secure_server_init) when action is ADMIT,
 * or REFUSE with sealed; otherwise it is wiped. The caller wipes it when the
 * peer goes. Returns the action (also in result->action). */
cradle_handshake_action cradle_handshake_first_packet(cradle_handshake_result *result,
                                                      cradle_secure *session,
                                                      const cradle_handshake_config *config,
                                                      const uint8_t *data, size_t size);

#endif
