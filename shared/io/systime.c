/*
 * systime: the OS clocks and sleeping (see systime.h).
 */
#define _GNU_SOURCE /* ppoll */
#include "cradle/systime.h"

#include <errno.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_S 1000000000ull

static uint64_t read_ns(clockid_t id) {
    struct timespec ts;
    (void)clock_gettime(id, &ts); /* cannot fail for these two clocks */
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

uint64_t cradle_mono_ns(void) { return read_ns(CLOCK_MONOTONIC); }

uint64_t cradle_mono_ms(void) { return read_ns(CLOCK_MONOTONIC) / 1000000u; }

uint64_t cradle_wall_ns(void) { return read_ns(CLOCK_REALTIME); }

bool cradle_sleep_ns_unless(uint64_t ns, const volatile sig_atomic_t *stop) {
    if (stop && *stop) return false;
    struct timespec ts = {.tv_sec = (time_t)(ns / NS_PER_S), .tv_nsec = (long)(ns % NS_PER_S)};
    /* nanosleep writes the time left into ts when a signal interrupts it. */
    while (nanosleep(&ts, &ts) != 0) {
        if (errno != EINTR) return true; /* EINVAL cannot happen: tv_nsec < 1e9 */
        if (stop && *stop) return false;
    }
    return true;
}

void cradle_sleep_ns(uint64_t ns) { (void)cradle_sleep_ns_unless(ns, NULL); }

bool cradle_sleep_ns_or_fd(uint64_t ns, int fd) {
    struct timespec ts = {.tv_sec = (time_t)(ns / NS_PER_S), .tv_nsec = (long)(ns % NS_PER_S)};
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (ppoll(&p, fd >= 0 ? 1 : 0, &ts, NULL) <= 0 || !(p.revents & POLLIN)) return false;
    cradle_drain_wake_fd(fd);
    return true;
}

void cradle_drain_wake_fd(int fd) {
    char drain[64];
    while (read(fd, drain, sizeof drain) > 0) {
    }
}
