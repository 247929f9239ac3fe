/* Tests for desync_report: the client's report parsed, every field checked
 * with the line and the field named. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/desync_report.h"

/* A report: header text with `header` lines replaced, then the binary part
 * sized from state_size and snapshots unless extra says otherwise. */
static size_t make(uint8_t *out, const char *header, uint32_t state_size, uint64_t snapshots,
                   uint32_t snapshot_size, long extra) {
    size_t n = (size_t)snprintf((char *)out, 1024, "%s", header);
    size_t binary = 2u * state_size + snapshots * snapshot_size;
    for (size_t i = 0; i < binary; i++) out[n + i] = (uint8_t)i;
    return (size_t)((long)(n + binary) + extra);
}

#define GOOD_HEADER                                                                             \
    "cradle-desync 1\ngame vanguard\nbuild 0123456789abcdef\nstep 10\nclient_hash 00000000000000aa\n" \
    "server_hash 00000000000000bb\nbase_step 6\nsnapshot_size 9\nsnapshots 4\ntruncated 0\n"       \
    "state_size 16\nend\n"

static void test_good_report(void **unused) {
    (void)unused;
    static uint8_t bytes[4096];
    size_t n = make(bytes, GOOD_HEADER, 16, 4, 9, 0);
    cradle_desync_report r;
    char message[256];
    assert_int_equal(cradle_desync_report_parse(&r, bytes, n, message, sizeof message), 0);
    assert_string_equal(r.game, "vanguard");
    assert_string_equal(r.build, "0123456789abcdef");
    assert_int_equal(r.step, 10);
    assert_int_equal(r.client_hash, 0xaa);
    assert_int_equal(r.server_hash, 0xbb);
    assert_int_equal(r.base_step, 6);
    assert_int_equal(r.snapshots, 4);
    size_t header = strlen(GOOD_HEADER);
    assert_ptr_equal(r.base, bytes + header);
    assert_ptr_equal(r.snapshot_data, bytes + header + 16);
    assert_ptr_equal(r.client_state, bytes + header + 16 + 36);
    /* From the start: base_step -1, steps 0..10. */
    const char *start = "cradle-desync 1\ngame g\nbuild b\nstep 10\nclient_hash 0000000000000001\n"
                        "server_hash 0000000000000002\nbase_step -1\nsnapshot_size 2\nsnapshots 11\n"
                        "truncated 0\nstate_size 4\nend\n";
    n = make(bytes, start, 4, 11, 2, 0);
    assert_int_equal(cradle_desync_report_parse(&r, bytes, n, message, sizeof message), 0);
    assert_int_equal(r.base_step, -1);
}

static void expect_refusal(const char *header, uint32_t state_size, uint64_t snapshots, uint32_t snapshot_size,
                           long extra, const char *part) {
    static uint8_t bytes[8192];
    size_t n = make(bytes, header, state_size, snapshots, snapshot_size, extra);
    cradle_desync_report r;
    char message[256] = "";
    int rc = cradle_desync_report_parse(&r, bytes, n, message, sizeof message);
    if (rc != CRADLE_EDESYNC_REPORT || !strstr(message, part))
        fail_msg("rc %d, message \"%s\", wanted \"%s\"", rc, message, part);
}

static void test_refusals(void **unused) {
    (void)unused;
    expect_refusal(GOOD_HEADER, 16, 4, 9, -1, "after the header: 67 bytes, the header says 68");
    expect_refusal(GOOD_HEADER, 16, 4, 9, 5, "after the header: 73 bytes, the header says 68");
    expect_refusal("cradle-desync 2\n", 0, 0, 0, 0, "line 1: expected \"cradle-desync 1\"");
    expect_refusal("cradle-desync 1\ngame vanguard\n", 0, 0, 0, 0, "line 3: the header ends without its \"end\" line");
    expect_refusal("cradle-desync 1\nbuild x\n", 0, 0, 0, 0, "line 2: expected \"game <value>\", got \"build x\"");
    expect_refusal("cradle-desync 1\ngame \n", 0, 0, 0, 0, "line 2: game must be 1..31 bytes");
    expect_refusal("cradle-desync 1\ngame v\x01\n", 0, 0, 0, 0, "line 2: byte 0x01 is not printable ASCII");
    expect_refusal("cradle-desync 1\ngame v\nbuild b\nstep -3\n", 0, 0, 0, 0, "line 4: step '-3' is not a whole number");
    expect_refusal("cradle-desync 1\ngame v\nbuild b\nstep 3\nclient_hash 12\n", 0, 0, 0, 0,
                   "line 5: client_hash '12' is not 16 lowercase hex digits");
    const char *base_after = "cradle-desync 1\ngame g\nbuild b\nstep 5\nclient_hash 0000000000000001\n"
                             "server_hash 0000000000000002\nbase_step 5\nsnapshot_size 2\nsnapshots 0\n"
                             "truncated 0\nstate_size 4\nend\n";
    expect_refusal(base_after, 4, 0, 2, 0, "base_step 5 is not before step 5");
    const char *too_many = "cradle-desync 1\ngame g\nbuild b\nstep 5\nclient_hash 0000000000000001\n"
                           "server_hash 0000000000000002\nbase_step 3\nsnapshot_size 2\nsnapshots 3\n"
                           "truncated 0\nstate_size 4\nend\n";
    expect_refusal(too_many, 4, 3, 2, 0, "snapshots 3 does not fit steps 4..5 (truncated 0)");
    const char *huge = "cradle-desync 1\ngame g\nbuild b\nstep 5\nclient_hash 0000000000000001\n"
                       "server_hash 0000000000000002\nbase_step 3\nsnapshot_size 2\nsnapshots 2\n"
                       "truncated 0\nstate_size 4294967295\nend\n";
    expect_refusal(huge, 0, 0, 0, 0, "state_size 4294967295 not in 1..268435456");
    const char *flag = "cradle-desync 1\ngame g\nbuild b\nstep 5\nclient_hash 0000000000000001\n"
                       "server_hash 0000000000000002\nbase_step 3\nsnapshot_size 2\nsnapshots 2\n"
                       "truncated 2\n";
    expect_refusal(flag, 0, 0, 0, 0, "line 10: truncated '2' is not 0 or 1");
    cradle_desync_report r;
    char message[64];
    assert_int_equal(cradle_desync_report_parse(&r, (const uint8_t *)"", 0, message, sizeof message),
                     CRADLE_EDESYNC_REPORT);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_report),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
