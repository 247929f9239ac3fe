#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cradle/keys.h"

static char dir[64];
static char path[128];
static char message[512];

static int setup(void **state) {
    (void)state;
    strcpy(dir, "/tmp/cradle_keys_XXXXXX");
    if (mkdtemp(dir) == NULL) return -1;
    snprintf(path, sizeof path, "%s/server.key", dir);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    char p[160];
    const char *names[] = {"server.key", "link.key", "sub", "copy.key"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        if (unlink(p) != 0) rmdir(p);
    }
    rmdir(dir);
    return 0;
}

static void fixed_keys(cradle_keys *k, uint8_t salt) {
    uint8_t a[32], b[32];
    for (int i = 0; i < 32; i++) {
        a[i] = (uint8_t)(i + salt);
        b[i] = (uint8_t)(200 - i + salt);
    }
    assert_int_equal(cradle_keys_from_seeds(k, a, b), 0);
}

static void read_file(uint8_t *buf, size_t n) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fread(buf, 1, n, f), n);
    fclose(f);
}

static void write_file(const uint8_t *buf, size_t n, mode_t mode) {
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, buf, n), (ssize_t)n);
    assert_int_equal(fchmod(fd, mode), 0);
    close(fd);
}

static void test_save_creates_0600_and_loads_back(void **state) {
    (void)state;
    cradle_keys k, l;
    assert_int_equal(cradle_keys_generate(&k), 0);
    assert_int_equal(cradle_keys_save(&k, path, message, sizeof message), 0);
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(st.st_size, CRADLE_KEYS_FILE_BYTES);
    assert_int_equal(cradle_keys_load(&l, path, message, sizeof message), 0);
    assert_memory_equal(&k, &l, sizeof k);

    /* The derived public keys are the ones libsodium would give. */
    uint8_t pk[32];
    assert_int_equal(crypto_scalarmult_base(pk, l.kx_secret), 0);
    assert_memory_equal(pk, l.kx_public, 32);
    assert_int_equal(crypto_sign_ed25519_sk_to_pk(pk, l.sign_secret), 0);
    assert_memory_equal(pk, l.sign_public, 32);

    /* Two generated key sets differ. */
    cradle_keys m;
    assert_int_equal(cradle_keys_generate(&m), 0);
    assert_memory_not_equal(m.kx_secret, k.kx_secret, 32);
    cradle_keys_wipe(&m);
    uint8_t zero[sizeof m];
    memset(zero, 0, sizeof zero);
    assert_memory_equal(&m, zero, sizeof m);
}

static void test_file_layout(void **state) {
    (void)state;
    cradle_keys k;
    fixed_keys(&k, 1);
    assert_int_equal(cradle_keys_save(&k, path, NULL, 0), 0);
    uint8_t f[CRADLE_KEYS_FILE_BYTES];
    read_file(f, sizeof f);
    const uint8_t magic[8] = {0x89, 'C', 'R', 'D', 'K', 'E', 'Y', 0x0A};
    assert_memory_equal(f, magic, 8);
    assert_int_equal(f[8], 1);
    assert_int_equal(f[9] | f[10] | f[11] | f[12] | f[13] | f[14] | f[15], 0);
    assert_memory_equal(f + 16, k.kx_secret, 32);
    assert_memory_equal(f + 48, k.sign_secret, 32); /* the seed */
}

static void test_never_replaces(void **state) {
    (void)state;
    cradle_keys k;
    fixed_keys(&k, 2);
    assert_int_equal(cradle_keys_save(&k, path, NULL, 0), 0);
    cradle_keys other;
    fixed_keys(&other, 3);
    assert_int_equal(cradle_keys_save(&other, path, message, sizeof message), CRADLE_EKEY_EXISTS);
    assert_non_null(strstr(message, "already exists"));
    cradle_keys l;
    assert_int_equal(cradle_keys_load(&l, path, NULL, 0), 0);
    assert_memory_equal(l.kx_secret, k.kx_secret, 32);

    /* A dangling symlink is not followed either. */
    char link_path[160], target[160];
    snprintf(link_path, sizeof link_path, "%s/link.key", dir);
    snprintf(target, sizeof target, "%s/copy.key", dir);
    assert_int_equal(symlink(target, link_path), 0);
    assert_int_equal(cradle_keys_save(&k, link_path, NULL, 0), CRADLE_EKEY_EXISTS);
    assert_int_equal(access(target, F_OK), -1);
}

static void test_refuses_group_or_other_access(void **state) {
    (void)state;
    cradle_keys k, l;
    fixed_keys(&k, 4);
    assert_int_equal(cradle_keys_save(&k, path, NULL, 0), 0);
    const mode_t bad[] = {0644, 0640, 0604, 0660, 0602, 0610, 0601};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(chmod(path, bad[i]), 0);
        memset(&l, 0xAA, sizeof l);
        assert_int_equal(cradle_keys_load(&l, path, message, sizeof message),
                         CRADLE_EKEY_PERMISSIONS);
        assert_non_null(strstr(message, "chmod 600"));
        uint8_t zero[sizeof l];
        memset(zero, 0, sizeof zero);
        assert_memory_equal(&l, zero, sizeof l); /* wiped on failure */
    }
    assert_int_equal(chmod(path, 0400), 0);
    assert_int_equal(cradle_keys_load(&l, path, NULL, 0), 0);
}

static void test_refuses_symlink_and_non_regular(void **state) {
    (void)state;
    cradle_keys k, l;
    fixed_keys(&k, 5);
    assert_int_equal(cradle_keys_save(&k, path, NULL, 0), 0);
    char link_path[160], sub[160];
    snprintf(link_path, sizeof link_path, "%s/link.key", dir);
    assert_int_equal(symlink(path, link_path), 0);
    assert_int_equal(cradle_keys_load(&l, link_path, message, sizeof message),
                     CRADLE_EKEY_NOT_REGULAR);
    assert_non_null(strstr(message, "symlink"));
    snprintf(sub, sizeof sub, "%s/sub", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    assert_int_equal(cradle_keys_load(&l, sub, NULL, 0), CRADLE_EKEY_NOT_REGULAR);
    char missing[160];
    snprintf(missing, sizeof missing, "%s/missing.key", dir);
    assert_int_equal(cradle_keys_load(&l, missing, message, sizeof message), CRADLE_EIO);
}

static void test_refuses_foreign_owner(void **state) {
    (void)state;
    if (geteuid() != 0) skip(); /* only root can give a file away */
    cradle_keys k, l;
    fixed_keys(&k, 6);
    assert_int_equal(cradle_keys_save(&k, path, NULL, 0), 0);
    assert_int_equal(chown(path, 65534, 65534), 0);
    assert_int_equal(cradle_keys_load(&l, path, message, sizeof message), CRADLE_EKEY_OWNER);
}

static void test_refuses_damaged_files(void **state) {
    (void)state;
    cradle_keys k, l;
    fixed_keys(&k, 7);
    assert_int_equal(cradle_keys_save(&k, path, NULL, 0), 0);
    uint8_t good[CRADLE_KEYS_FILE_BYTES], f[CRADLE_KEYS_FILE_BYTES + 1];
    read_file(good, sizeof good);

    /* Every single flipped bit is caught (magic, version, reserved, secret, checksum). */
    for (size_t i = 0; i < sizeof good; i++) {
        memcpy(f, good, sizeof good);
        f[i] ^= 0x10;
        write_file(f, sizeof good, 0600);
        assert_int_equal(cradle_keys_load(&l, path, NULL, 0), CRADLE_EKEY_FORMAT);
    }
    /* Truncated, empty and oversized. */
    const size_t sizes[] = {0, 1, 16, CRADLE_KEYS_FILE_BYTES - 1, CRADLE_KEYS_FILE_BYTES + 1};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        memcpy(f, good, sizeof good);
        f[CRADLE_KEYS_FILE_BYTES] = 0;
        write_file(f, sizes[i], 0600);
        assert_int_equal(cradle_keys_load(&l, path, message, sizeof message), CRADLE_EKEY_FORMAT);
    }
    write_file(good, sizeof good, 0600);
    assert_int_equal(cradle_keys_load(&l, path, NULL, 0), 0);
    assert_memory_equal(&l, &k, sizeof k);
}

static void test_hex(void **state) {
    (void)state;
    uint8_t key[32], back[32];
    for (int i = 0; i < 32; i++) key[i] = (uint8_t)(i * 9 + 250);
    char hex[CRADLE_KEYS_HEX_SIZE];
    cradle_keys_to_hex(hex, key);
    assert_int_equal(strlen(hex), 64);
    assert_int_equal(cradle_keys_from_hex(back, hex), 0);
    assert_memory_equal(key, back, 32);
    for (int i = 0; i < 64; i++)
        if (hex[i] >= 'a') hex[i] = (char)(hex[i] - 'a' + 'A');
    assert_int_equal(cradle_keys_from_hex(back, hex), 0);
    assert_memory_equal(key, back, 32);

    char bad[80];
    strcpy(bad, hex);
    bad[63] = '\0'; /* short */
    assert_int_equal(cradle_keys_from_hex(back, bad), CRADLE_EINVAL);
    strcpy(bad, hex);
    strcat(bad, "0"); /* long */
    assert_int_equal(cradle_keys_from_hex(back, bad), CRADLE_EINVAL);
    strcpy(bad, hex);
    bad[10] = 'g';
    assert_int_equal(cradle_keys_from_hex(back, bad), CRADLE_EINVAL);
    assert_int_equal(cradle_keys_from_hex(back, ""), CRADLE_EINVAL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_save_creates_0600_and_loads_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_layout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_never_replaces, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_group_or_other_access, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_symlink_and_non_regular, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_foreign_owner, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_damaged_files, setup, teardown),
        cmocka_unit_test(test_hex),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
