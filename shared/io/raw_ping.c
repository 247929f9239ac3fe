/*
 * raw_ping: the raw PING/PONG datagram's framing (cradle/raw_ping.h).
 */
#include "cradle/raw_ping.h"

#include <linux/sockios.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include "cradle/systime.h"

enum { BODY_MAX = CRADLE_RAW_PING_MAX - CRADLE_WIRE_RAW_PING_MAGIC_BYTES };

bool cradle_raw_ping_is(const void *datagram, size_t size) {
    return size >= CRADLE_WIRE_RAW_PING_MAGIC_BYTES &&
           memcmp(datagram, CRADLE_WIRE_RAW_PING_MAGIC, CRADLE_WIRE_RAW_PING_MAGIC_BYTES) == 0;
}

int cradle_raw_ping_encode(cradle_secure *s, const cradle_wire_message *m, uint8_t *out, size_t capacity,
                           size_t *length) {
    if (m->type != CRADLE_WIRE_PING && m->type != CRADLE_WIRE_PONG) return CRADLE_EINVAL;
    if (capacity < CRADLE_WIRE_RAW_PING_MAGIC_BYTES) return CRADLE_EFULL;
    uint8_t plain[BODY_MAX];
    size_t n = 0;
    int rc = cradle_wire_encode(plain, sizeof plain, &n, m);
    if (rc != 0) return rc;
    uint8_t *body = out + CRADLE_WIRE_RAW_PING_MAGIC_BYTES;
    size_t room = capacity - CRADLE_WIRE_RAW_PING_MAGIC_BYTES;
    if (s) {
        rc = cradle_secure_seal(s, body, room, &n, plain, n);
        if (rc != 0) return rc;
    } else {
        if (n > room) return CRADLE_EFULL;
        memcpy(body, plain, n);
    }
    memcpy(out, CRADLE_WIRE_RAW_PING_MAGIC, CRADLE_WIRE_RAW_PING_MAGIC_BYTES);
    *length = CRADLE_WIRE_RAW_PING_MAGIC_BYTES + n;
    return 0;
}

int cradle_raw_ping_decode(cradle_secure *s, const void *datagram, size_t size, cradle_wire_message *m) {
    if (!cradle_raw_ping_is(datagram, size) || size > CRADLE_RAW_PING_MAX) return CRADLE_ENET_MESSAGE;
    const uint8_t *body = (const uint8_t *)datagram + CRADLE_WIRE_RAW_PING_MAGIC_BYTES;
    size_t n = size - CRADLE_WIRE_RAW_PING_MAGIC_BYTES;
    uint8_t opened[BODY_MAX];
    if (s) {
        int rc = cradle_secure_open(s, opened, sizeof opened, &n, body, n);
        if (rc != 0) return rc;
        body = opened;
    }
    if (cradle_wire_decode(m, body, n) != 0) return CRADLE_ENET_MESSAGE;
    return m->type == CRADLE_WIRE_PING || m->type == CRADLE_WIRE_PONG ? 0 : CRADLE_ENET_MESSAGE;
}

void cradle_raw_ping_stamp_arrivals(int socket) {
    struct timespec ts;
    (void)ioctl(socket, SIOCGSTAMPNS, &ts); /* ENOENT: nothing stamped yet, from now on */
}

uint64_t cradle_raw_ping_arrival_ns(int socket) {
    struct timespec ts;
    if (ioctl(socket, SIOCGSTAMPNS, &ts) != 0) return cradle_wall_ns();
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
