/*
 * raw_datagram: the framing of the datagrams beside ENet (cradle/raw_datagram.h).
 */
#include "cradle/raw_datagram.h"

#include <linux/sockios.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include "cradle/systime.h"

_Static_assert(CRADLE_RAW_MESSAGE_MAX <= CRADLE_SECURE_PLAIN_MAX, "a raw message seals");

bool cradle_raw_is(const void *datagram, size_t size) {
    return size >= CRADLE_WIRE_RAW_MAGIC_BYTES &&
           memcmp(datagram, CRADLE_WIRE_RAW_MAGIC, CRADLE_WIRE_RAW_MAGIC_BYTES) == 0;
}

static bool travels_raw(uint8_t type) {
    return type == CRADLE_WIRE_PING || type == CRADLE_WIRE_PONG || type == CRADLE_WIRE_STEPS;
}

int cradle_raw_seal(cradle_secure *s, const void *plain, size_t size, uint8_t *out, size_t capacity,
                    size_t *length) {
    if (size > CRADLE_RAW_MESSAGE_MAX) return CRADLE_EINVAL;
    if (capacity < CRADLE_WIRE_RAW_MAGIC_BYTES) return CRADLE_EFULL;
    uint8_t *body = out + CRADLE_WIRE_RAW_MAGIC_BYTES;
    size_t room = capacity - CRADLE_WIRE_RAW_MAGIC_BYTES, n = size;
    if (s) {
        int rc = cradle_secure_seal_lane(s, CRADLE_SECURE_UNORDERED, body, room, &n, plain, size);
        if (rc != 0) return rc;
    } else {
        if (size > room) return CRADLE_EFULL;
        memcpy(body, plain, size);
    }
    memcpy(out, CRADLE_WIRE_RAW_MAGIC, CRADLE_WIRE_RAW_MAGIC_BYTES);
    *length = CRADLE_WIRE_RAW_MAGIC_BYTES + n;
    return 0;
}

int cradle_raw_encode(cradle_secure *s, const cradle_wire_message *m, uint8_t *out, size_t capacity,
                      size_t *length) {
    if (!travels_raw(m->type)) return CRADLE_EINVAL;
    uint8_t plain[CRADLE_RAW_MESSAGE_MAX];
    size_t n = 0;
    int rc = cradle_wire_encode(plain, sizeof plain, &n, m);
    if (rc != 0) return CRADLE_EINVAL; /* EFULL here: too long for a raw datagram */
    return cradle_raw_seal(s, plain, n, out, capacity, length);
}

int cradle_raw_decode(cradle_secure *s, const void *datagram, size_t size, uint8_t *scratch,
                      cradle_wire_message *m) {
    m->problem = NULL;
    if (!cradle_raw_is(datagram, size) || size > CRADLE_RAW_DATAGRAM_MAX) return CRADLE_ENET_MESSAGE;
    const uint8_t *body = (const uint8_t *)datagram + CRADLE_WIRE_RAW_MAGIC_BYTES;
    size_t n = size - CRADLE_WIRE_RAW_MAGIC_BYTES;
    if (s) {
        int rc = cradle_secure_open(s, scratch, CRADLE_RAW_MESSAGE_MAX, &n, body, n);
        if (rc != 0) return rc;
    } else {
        if (n > CRADLE_RAW_MESSAGE_MAX) return CRADLE_ENET_MESSAGE;
        memcpy(scratch, body, n);
    }
    int rc = cradle_wire_decode(m, scratch, n);
    if (rc != 0) return rc;
    if (!travels_raw(m->type)) {
        m->problem = "a message that does not travel raw";
        return CRADLE_ENET_MESSAGE;
    }
    return 0;
}

void cradle_raw_stamp_arrivals(int socket) {
    struct timespec ts;
    (void)ioctl(socket, SIOCGSTAMPNS, &ts); /* ENOENT: nothing stamped yet, from now on */
}

uint64_t cradle_raw_arrival_ns(int socket) {
    struct timespec ts;
    if (ioctl(socket, SIOCGSTAMPNS, &ts) != 0) return cradle_wall_ns();
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
