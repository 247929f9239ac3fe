#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cradle/cradle.h"

static void test_placeholder_input(void **state) { (void)state; }

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_placeholder_input)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
