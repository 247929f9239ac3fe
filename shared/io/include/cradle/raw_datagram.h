#ifndef CRADLE_RAW_DATAGRAM_H
#define CRADLE_RAW_DATAGRAM_H
/*
 * raw_datagram: the datagrams Cradle sends beside ENet, on ENet's own
 * sockets (wire.h, "Raw datagrams"): the step stream from the server to its
 * admitted clients (STEPS, sent in batches: server/src/fanout.h) and the
 * client's PING with the server's PONG, which measure the link's round
 * trip. This is their framing, the same on both sides: the magic, then the
 * message, sealed (secure.h) on the unordered lane in a secure session; and
 * when a datagram arrived at its socket. Each side takes them in ENet's
 * intercept hook (netclient.c, server/src/net.c) before ENet sees them.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"
#include "cradle/secure.h"
#include "cradle/wire.h"

/* The largest raw datagram: what any path carries unfragmented (IPv6's
 * minimum MTU, 1,280 bytes, less its IP and UDP headers). A STEPS message
 * that would not fit goes through ENet, which fragments. */
#define CRADLE_RAW_DATAGRAM_MAX 1232u
/* The largest message one carries. */
#define CRADLE_RAW_MESSAGE_MAX (CRADLE_RAW_DATAGRAM_MAX - CRADLE_WIRE_RAW_MAGIC_BYTES - CRADLE_SECURE_OVERHEAD)

/* Whether a datagram is a raw one (begins with the magic): ENet's if not. */
bool cradle_raw_is(const void *datagram, size_t size);

/* The magic, then the encoded message plain (size bytes, at most
 * CRADLE_RAW_MESSAGE_MAX) sealed by s on the unordered lane (s NULL:
 * plaintext, an insecure session), into out. Returns 0, CRADLE_EINVAL (too
 * long for a raw datagram), CRADLE_EFULL (out too small), or the seal's
 * error (CRADLE_ESECURE_EXHAUSTED). */
CRADLE_MUST_CHECK int cradle_raw_seal(cradle_secure *s, const void *plain, size_t size, uint8_t *out,
                                      size_t capacity, size_t *length);

/* The message m (a PING, PONG or STEPS: the only ones that travel raw)
 * encoded, then sealed as cradle_raw_seal. Returns as it does, and
 * CRADLE_EINVAL for another type or a message that does not encode. */
CRADLE_MUST_CHECK int cradle_raw_encode(cradle_secure *s, const cradle_wire_message *m, uint8_t *out,
                                        size_t capacity, size_t *length);

/* A raw datagram (untrusted) opened by s (NULL: plaintext) into scratch
 * (CRADLE_RAW_MESSAGE_MAX bytes) and decoded into m, which points into
 * scratch (a STEPS's snapshots). Returns 0, the open's error (counted in
 * s->stats: forged, replayed), or CRADLE_ENET_MESSAGE (no magic, too long,
 * no message, or a type that does not travel raw; m->problem may name the
 * field), CRADLE_ENET_VERSION (another protocol version). */
CRADLE_MUST_CHECK int cradle_raw_decode(cradle_secure *s, const void *datagram, size_t size, uint8_t *scratch,
                                        cradle_wire_message *m);

/* Has the kernel stamp every datagram socket receives from now on (it
 * starts at a socket's first SIOCGSTAMPNS, which finds none, and the
 * kernel may leave the next datagram or two unstamped while it turns it
 * on): call it when the socket opens. */
void cradle_raw_stamp_arrivals(int socket);

/* When the datagram just read from socket arrived there: the kernel's
 * receive timestamp (SIOCGSTAMPNS), in nanoseconds on CLOCK_REALTIME like
 * cradle_wall_ns(); now when the kernel has none. */
uint64_t cradle_raw_arrival_ns(int socket);

#endif
