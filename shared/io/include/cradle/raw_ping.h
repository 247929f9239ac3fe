#ifndef CRADLE_RAW_PING_H
#define CRADLE_RAW_PING_H
/*
 * raw_ping: the link's round trip, measured beside ENet (wire.h, "A
 * client's PING and the server's PONG travel outside ENet"): the raw
 * datagram's framing, the same on both sides, and when a datagram arrived
 * at its socket. The client sends PINGs and takes PONGs (netclient.c), the
 * server answers (server/src/net.c), each in ENet's intercept hook.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"
#include "cradle/secure.h"
#include "cradle/wire.h"

/* The largest raw datagram: the magic and a sealed PING or PONG. */
#define CRADLE_RAW_PING_MAX (CRADLE_WIRE_RAW_PING_MAGIC_BYTES + 32u + CRADLE_SECURE_OVERHEAD)

/* Whether a datagram is a raw one (begins with the magic): ENet's if not. */
bool cradle_raw_ping_is(const void *datagram, size_t size);

/* The magic, then the PING or PONG m, sealed by s on the unordered lane (s
 * NULL: plaintext, an insecure session), into out. Returns 0, CRADLE_EINVAL
 * (m does not encode or is no PING/PONG), CRADLE_EFULL, or the seal's error
 * (CRADLE_ESECURE_EXHAUSTED). */
CRADLE_MUST_CHECK int cradle_raw_ping_encode(cradle_secure *s, const cradle_wire_message *m, uint8_t *out,
                                             size_t capacity, size_t *length);

/* A raw datagram (untrusted; cradle_raw_ping_is holds) into m: opened by s
 * (NULL: plaintext) and decoded, a PING or a PONG. Returns 0, the open's
 * error (counted in s->stats), or CRADLE_ENET_MESSAGE (too long, no
 * message, or another type). */
CRADLE_MUST_CHECK int cradle_raw_ping_decode(cradle_secure *s, const void *datagram, size_t size,
                                             cradle_wire_message *m);

/* Has the kernel stamp every datagram socket receives from now on (it
 * starts at a socket's first SIOCGSTAMPNS, which finds none, and the
 * kernel may leave the next datagram or two unstamped while it turns it
 * on): call it when the socket opens. */
void cradle_raw_ping_stamp_arrivals(int socket);

/* When the datagram just read from socket arrived there: the kernel's
 * receive timestamp (SIOCGSTAMPNS), in nanoseconds on CLOCK_REALTIME like
 * cradle_wall_ns(); now when the kernel has none. */
uint64_t cradle_raw_ping_arrival_ns(int socket);

#endif
