#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "cradle/systime.h"

#define MS 1000000ull

static volatile sig_atomic_t alarms;
static volatile sig_atomic_t stop_flag;
static volatile sig_atomic_t set_stop_on_alarm;

static void on_alarm(int signal_number) {
    (void)signal_number;
    alarms++;
    if (set_stop_on_alarm) stop_flag = 1;
}

/* Delivers SIGALRM once, after ms, to interrupt a sleep (no SA_RESTART:
 * nanosleep fails with EINTR). */
static timer_t arm_alarm(uint64_t ms) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGALRM;
    timer_t timer;
    assert_int_equal(timer_create(CLOCK_MONOTONIC, &ev, &timer), 0);
    struct itimerspec when = {.it_value = {.tv_sec = 0, .tv_nsec = (long)(ms * MS)}};
    assert_int_equal(timer_settime(timer, 0, &when, NULL), 0);
    return timer;
}

static void test_clocks_agree(void **state) {
    (void)state;
    uint64_t before = cradle_mono_ns();
    uint64_t ms = cradle_mono_ms();
    uint64_t after = cradle_mono_ns();
    assert_true(after >= before);
    assert_true(ms >= before / MS && ms <= after / MS); /* truncated, no offset */
    /* 2020-01-01 in Unix nanoseconds: the wall clock is on the epoch scale. */
    assert_true(cradle_wall_ns() > 1577836800ull * 1000000000ull);
}

static void test_sleep_resumes_after_a_signal(void **state) {
    (void)state;
    alarms = 0;
    set_stop_on_alarm = 0;
    timer_t timer = arm_alarm(10);
    uint64_t start = cradle_mono_ns();
    cradle_sleep_ns(60 * MS);
    uint64_t slept = cradle_mono_ns() - start;
    timer_delete(timer);
    assert_int_equal(alarms, 1);  /* the sleep was interrupted ... */
    assert_true(slept >= 60 * MS); /* ... and went on for the rest */
    cradle_sleep_ns(0);
}

static void test_stop_flag_ends_the_sleep(void **state) {
    (void)state;
    alarms = 0;
    stop_flag = 0;
    set_stop_on_alarm = 1;
    timer_t timer = arm_alarm(10);
    /* Would take 10 s if the flag were ignored; returns false once it is set. */
    assert_false(cradle_sleep_ns_unless(10000 * MS, &stop_flag));
    timer_delete(timer);
    assert_int_equal(alarms, 1);
    /* Already set: returns at once without sleeping. */
    assert_false(cradle_sleep_ns_unless(10000 * MS, &stop_flag));
    /* Not set, not interrupted: the whole time. */
    stop_flag = 0;
    uint64_t start = cradle_mono_ns();
    assert_true(cradle_sleep_ns_unless(2 * MS, &stop_flag));
    assert_true(cradle_mono_ns() - start >= 2 * MS);
    assert_true(cradle_sleep_ns_unless(1 * MS, NULL));
}

/* A readable wake-up pipe ends the sleep at once and is read dry; without
 * it the sleep takes its whole time; a signal ends it early. */
static void test_sleep_until_fd_is_readable(void **state) {
    (void)state;
    int wake[2];
    assert_int_equal(pipe(wake), 0);
    assert_int_equal(fcntl(wake[0], F_SETFL, O_NONBLOCK), 0);
    char bytes[300] = {0};
    assert_int_equal(write(wake[1], bytes, sizeof bytes), (ssize_t)sizeof bytes);
    /* Ten seconds unless the pipe ends it. */
    assert_true(cradle_sleep_ns_or_fd(10000 * MS, wake[0]));
    char c;
    assert_int_equal(read(wake[0], &c, 1), -1);
    assert_int_equal(errno, EAGAIN);

    uint64_t start = cradle_mono_ns();
    assert_false(cradle_sleep_ns_or_fd(5 * MS, wake[0]));
    assert_true(cradle_mono_ns() - start >= 5 * MS);
    start = cradle_mono_ns();
    assert_false(cradle_sleep_ns_or_fd(2 * MS, -1));
    assert_true(cradle_mono_ns() - start >= 2 * MS);

    alarms = 0;
    set_stop_on_alarm = 0;
    timer_t timer = arm_alarm(10);
    assert_false(cradle_sleep_ns_or_fd(10000 * MS, wake[0])); /* the signal, not 10 s */
    timer_delete(timer);
    assert_int_equal(alarms, 1);
    close(wake[0]);
    close(wake[1]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clocks_agree),
        cmocka_unit_test(test_sleep_resumes_after_a_signal),
        cmocka_unit_test(test_stop_flag_ends_the_sleep),
        cmocka_unit_test(test_sleep_until_fd_is_readable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
