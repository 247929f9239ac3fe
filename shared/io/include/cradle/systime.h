#ifndef CRADLE_SYSTIME_H
#define CRADLE_SYSTIME_H
/*
 * systime: the programs' reading of the OS clocks, and sleeping.
 *
 * The simulation never calls these (time is a parameter of the pure
 * modules); hosts, tools and tests read the clock here and pass it in.
 * CLOCK_MONOTONIC cannot fail on the platforms Cradle builds for (Linux,
 * glibc/musl), so the readers return the value without an error path.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

/* Nanoseconds on CLOCK_MONOTONIC: any origin (boot on Linux), never goes
 * backwards; for intervals and deadlines. */
uint64_t cradle_mono_ns(void);

/* Milliseconds on CLOCK_MONOTONIC, truncated: cradle_mono_ns() / 1000000,
 * so it can feed absolute deadlines of a condition variable bound to
 * CLOCK_MONOTONIC. It is 0 only in the first millisecond after boot: a
 * caller that keeps 0 for "never" must add its own offset. */
uint64_t cradle_mono_ms(void);

/* Nanoseconds since the Unix epoch on CLOCK_REALTIME: for timestamps people
 * read (log headers); it can jump, so never measure intervals with it. */
uint64_t cradle_wall_ns(void);

/* Sleeps at least ns nanoseconds, resuming after a signal interrupts it
 * (EINTR) until the whole time has passed. 0 returns at once. */
void cradle_sleep_ns(uint64_t ns);

/* As cradle_sleep_ns(), but a signal that has set *stop (nonzero; a flag
 * the program's handler writes) ends the sleep early. stop may be NULL
 * (then it is cradle_sleep_ns()). Returns true after the whole time, false
 * when *stop was or became nonzero (at once when it already was). A signal
 * landing between the caller's own check and the sleep is noticed at the
 * next interruption only: keep waits short where a stop must be prompt. */
bool cradle_sleep_ns_unless(uint64_t ns, const volatile sig_atomic_t *stop);

/* Sleeps up to ns nanoseconds, less when fd (a non-blocking wake-up pipe;
 * -1 for none) becomes readable, which it then reads dry, or when a signal
 * arrives (not resumed: the caller looks at its flags). Returns true when
 * fd ended the sleep. */
bool cradle_sleep_ns_or_fd(uint64_t ns, int fd);

/* Reads a non-blocking wake-up pipe dry: its bytes only ever meant "look". */
void cradle_drain_wake_fd(int fd);

#endif
