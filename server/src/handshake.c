#include "handshake.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

static cradle_handshake_action decide(cradle_handshake_result *r, cradle_handshake_action action) {
    r->action = action;
    return action;
}

static cradle_handshake_action refuse(cradle_handshake_result *r, uint8_t reason, const char *text) {
    r->reason = reason;
    cradle_wire_set_text(r->text, sizeof r->text, text);
    return decide(r, CRADLE_HANDSHAKE_REFUSE);
}

cradle_handshake_action cradle_handshake_first_packet(cradle_handshake_result *r,
                                                      cradle_secure *session,
                                                      const cradle_handshake_config *config,
                                                      const uint8_t *data, size_t size) {
    assert(r && session && config && config->verifier && config->keys);
    assert((data || size == 0) && "size bytes at data");
    memset(r, 0, sizeof *r);
    cradle_secure_wipe(session);
    size_t max = config->max_bytes ? config->max_bytes : CRADLE_WIRE_MESSAGE_MAX;

    cradle_wire_message m;
    int rc = size <= max ? cradle_wire_decode(&m, data, size) : CRADLE_ENET_MESSAGE;
    r->error = rc;
    if (rc == CRADLE_ENET_VERSION && m.type == CRADLE_WIRE_HELLO) {
        /* Another protocol: its credential cannot be read, so no keys exist
         * and the answer is a plaintext REFUSE. */
        r->hello = true;
        return refuse(r, CRADLE_WIRE_REFUSE_PROTOCOL, "protocol version differs");
    }
    if (rc != 0 || m.type != CRADLE_WIRE_HELLO) {
        if (rc == 0) r->error = CRADLE_ENET_MESSAGE;
        return decide(r, CRADLE_HANDSHAKE_IGNORE);
    }
    r->hello = true;
    const cradle_wire_hello *h = &m.as.hello;
    if (h->credential_size < CRADLE_TOKEN_MIN_BYTES + CRADLE_TOKEN_KEY_BYTES) {
        r->bad_credential = true;
        r->error = CRADLE_ETOKEN_MALFORMED;
        /* Short: the REFUSE is cut to the size of this HELLO (net.c), which
         * without a credential is 8 bytes plus game name and build id; 18
         * bytes fit a 4-byte REFUSE header beside vanguard's or counter's. */
        return refuse(r, CRADLE_WIRE_REFUSE_AUTH, "needs a join token");
    }
    size_t token_size = h->credential_size - CRADLE_TOKEN_KEY_BYTES;
    rc = cradle_secure_server_init(session, config->keys->kx_public, config->keys->kx_secret,
                                   h->credential + token_size,
                                   &(cradle_secure_config){.context = config->context});
    if (rc != 0) {
        cradle_secure_wipe(session);
        r->bad_credential = true;
        r->error = rc;
        return decide(r, CRADLE_HANDSHAKE_DROP); /* a degenerate key: nothing to seal a reply with */
    }
    r->sealed = true; /* keys exist: every reply is sealed */
    rc = cradle_token_verify(config->verifier, h->credential, token_size, config->now_unix, &r->token);
    r->error = rc;
    if (rc == CRADLE_ETOKEN_BUILD && strcmp(config->verifier->build_id, h->build_id) != 0) {
        /* The client runs another build (and its genuine token names that
         * one): say which, as the game thread does for a HELLO naming another
         * game or build. A client of the right build with a token for
         * another one gets the token's reason (token_build) below: both ids
         * would be the same. */
        char text[CRADLE_WIRE_TEXT_MAX + 1];
        memset(&r->token, 0, sizeof r->token);
        if (config->game && strcmp(config->game, h->game) != 0) {
            snprintf(text, sizeof text, "server hosts game '%s', client has '%s'", config->game, h->game);
            return refuse(r, CRADLE_WIRE_REFUSE_GAME, text);
        }
        snprintf(text, sizeof text, "server runs build '%s', client has '%s'",
                 config->verifier->build_id, h->build_id);
        return refuse(r, CRADLE_WIRE_REFUSE_BUILD, text);
    }
    if (rc != 0) {
        memset(&r->token, 0, sizeof r->token);
        return refuse(r, CRADLE_WIRE_REFUSE_AUTH, cradle_error_name(rc));
    }
    r->request = *h;
    return decide(r, CRADLE_HANDSHAKE_ADMIT);
}
