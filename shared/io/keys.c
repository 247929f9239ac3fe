/*
 * keys: long-term key pairs and the key file (format in keys.h).
 */
#include "cradle/keys.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cradle/input.h"

static const uint8_t MAGIC[8] = {0x89, 'C', 'R', 'D', 'K', 'E', 'Y', 0x0A};

enum {
    OFF_VERSION = 8,
    OFF_RESERVED = 12,
    OFF_KX = 16,
    OFF_SIGN = 48,
    OFF_CHECK = 80,
    CHECK_BYTES = 16,
};
_Static_assert(OFF_CHECK + CHECK_BYTES == CRADLE_KEYS_FILE_BYTES, "key file layout");
_Static_assert(crypto_kx_SECRETKEYBYTES == CRADLE_KEYS_KX_SECRET_BYTES, "kx secret size");
_Static_assert(crypto_kx_PUBLICKEYBYTES == CRADLE_KEYS_PUBLIC_BYTES, "kx public size");
_Static_assert(crypto_sign_PUBLICKEYBYTES == CRADLE_KEYS_PUBLIC_BYTES, "sign public size");
_Static_assert(crypto_sign_SECRETKEYBYTES == CRADLE_KEYS_SIGN_SECRET_BYTES, "sign secret size");
_Static_assert(crypto_sign_SEEDBYTES == CRADLE_KEYS_SEED_BYTES, "sign seed size");

static void say(char *message, size_t message_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(char *message, size_t message_size, const char *fmt, ...) {
    if (message == NULL || message_size == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, message_size, fmt, ap);
    va_end(ap);
}

int cradle_keys_from_seeds(cradle_keys *keys, const uint8_t kx_secret[CRADLE_KEYS_SEED_BYTES],
                           const uint8_t sign_seed[CRADLE_KEYS_SEED_BYTES]) {
    if (sodium_init() < 0) return CRADLE_EIO;
    memcpy(keys->kx_secret, kx_secret, CRADLE_KEYS_KX_SECRET_BYTES);
    /* crypto_kx_keypair derives its public key exactly so. */
    if (crypto_scalarmult_base(keys->kx_public, keys->kx_secret) != 0 ||
        crypto_sign_seed_keypair(keys->sign_public, keys->sign_secret, sign_seed) != 0) {
        cradle_keys_wipe(keys);
        return CRADLE_EIO;
    }
    return 0;
}

int cradle_keys_generate(cradle_keys *keys) {
    if (sodium_init() < 0) return CRADLE_EIO;
    uint8_t seeds[2 * CRADLE_KEYS_SEED_BYTES];
    randombytes_buf(seeds, sizeof seeds);
    int rc = cradle_keys_from_seeds(keys, seeds, seeds + CRADLE_KEYS_SEED_BYTES);
    sodium_memzero(seeds, sizeof seeds);
    return rc;
}

void cradle_keys_wipe(cradle_keys *keys) { sodium_memzero(keys, sizeof *keys); }

static void checksum(uint8_t out[CHECK_BYTES], const uint8_t *file) {
    crypto_generichash(out, CHECK_BYTES, file, OFF_CHECK, NULL, 0);
}

int cradle_keys_save(const cradle_keys *keys, const char *path, char *message,
                     size_t message_size) {
    if (sodium_init() < 0) return CRADLE_EIO;
    uint8_t file[CRADLE_KEYS_FILE_BYTES] = {0};
    memcpy(file, MAGIC, sizeof MAGIC);
    cradle_cursor_store_u32(file + OFF_VERSION, CRADLE_KEYS_FILE_VERSION);
    memcpy(file + OFF_KX, keys->kx_secret, CRADLE_KEYS_KX_SECRET_BYTES);
    memcpy(file + OFF_SIGN, keys->sign_secret, CRADLE_KEYS_SEED_BYTES); /* the seed half */
    checksum(file + OFF_CHECK, file);

    int rc = CRADLE_EIO;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        rc = errno == EEXIST ? CRADLE_EKEY_EXISTS : CRADLE_EIO;
        say(message, message_size, "cannot create key file %s: %s", path,
            errno == EEXIST ? "a file already exists there (refusing to replace a key)"
                            : strerror(errno));
        goto out_wipe;
    }
    /* The umask may have left fewer bits; never more than 0600 either way. */
    if (fchmod(fd, 0600) != 0) {
        say(message, message_size, "cannot chmod key file %s: %s", path, strerror(errno));
        goto out_unlink;
    }
    size_t done = 0;
    while (done < sizeof file) {
        ssize_t n = write(fd, file + done, sizeof file - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            say(message, message_size, "cannot write key file %s: %s", path,
                n < 0 ? strerror(errno) : "short write");
            goto out_unlink;
        }
        done += (size_t)n;
    }
    if (fsync(fd) != 0) {
        say(message, message_size, "cannot sync key file %s: %s", path, strerror(errno));
        goto out_unlink;
    }
    if (close(fd) != 0) {
        fd = -1;
        say(message, message_size, "cannot close key file %s: %s", path, strerror(errno));
        goto out_unlink;
    }
    rc = 0;
    goto out_wipe;

out_unlink:
    if (fd >= 0) close(fd);
    unlink(path);
out_wipe:
    sodium_memzero(file, sizeof file);
    return rc;
}

int cradle_keys_load(cradle_keys *keys, const char *path, char *message, size_t message_size) {
    uint8_t file[CRADLE_KEYS_FILE_BYTES + 1];
    uint8_t check[CHECK_BYTES];
    int rc = CRADLE_EIO;
    cradle_keys_wipe(keys);
    if (sodium_init() < 0) return CRADLE_EIO;

    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ELOOP) {
            rc = CRADLE_EKEY_NOT_REGULAR;
            say(message, message_size, "key file %s is a symlink: refused", path);
        } else {
            say(message, message_size, "cannot open key file %s: %s", path, strerror(errno));
        }
        return rc;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        say(message, message_size, "cannot stat key file %s: %s", path, strerror(errno));
        goto out_close;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = CRADLE_EKEY_NOT_REGULAR;
        say(message, message_size, "key file %s is not a regular file: refused", path);
        goto out_close;
    }
    if (st.st_uid != geteuid()) {
        rc = CRADLE_EKEY_OWNER;
        say(message, message_size, "key file %s is owned by uid %u, not by this user (uid %u)",
            path, (unsigned)st.st_uid, (unsigned)geteuid());
        goto out_close;
    }
    if ((st.st_mode & 077) != 0) {
        rc = CRADLE_EKEY_PERMISSIONS;
        say(message, message_size,
            "key file %s has mode %04o: group or others may access it; run: chmod 600 %s", path,
            (unsigned)(st.st_mode & 07777), path);
        goto out_close;
    }
    size_t got = 0;
    while (got < sizeof file) {
        ssize_t n = read(fd, file + got, sizeof file - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            say(message, message_size, "cannot read key file %s: %s", path, strerror(errno));
            goto out_close;
        }
        if (n == 0) break;
        got += (size_t)n;
    }
    rc = CRADLE_EKEY_FORMAT;
    if (got != CRADLE_KEYS_FILE_BYTES) {
        say(message, message_size, "key file %s has %s%zu bytes, expected %u", path,
            got > CRADLE_KEYS_FILE_BYTES ? "more than " : "", got > CRADLE_KEYS_FILE_BYTES ? got - 1 : got,
            CRADLE_KEYS_FILE_BYTES);
        goto out_close;
    }
    if (memcmp(file, MAGIC, sizeof MAGIC) != 0) {
        say(message, message_size, "%s is not a Cradle key file (bad magic)", path);
        goto out_close;
    }
    uint32_t version = cradle_cursor_load_u32(file + OFF_VERSION);
    if (version != CRADLE_KEYS_FILE_VERSION || cradle_cursor_load_u32(file + OFF_RESERVED) != 0) {
        say(message, message_size, "key file %s has unknown version %u", path, (unsigned)version);
        goto out_close;
    }
    checksum(check, file);
    if (sodium_memcmp(check, file + OFF_CHECK, CHECK_BYTES) != 0) {
        say(message, message_size, "key file %s is damaged (checksum mismatch)", path);
        goto out_close;
    }
    rc = cradle_keys_from_seeds(keys, file + OFF_KX, file + OFF_SIGN);
    if (rc != 0) say(message, message_size, "cannot derive keys from %s", path);

out_close:
    close(fd);
    sodium_memzero(file, sizeof file);
    if (rc != 0) cradle_keys_wipe(keys);
    return rc;
}

void cradle_keys_to_hex(char out[CRADLE_KEYS_HEX_SIZE], const uint8_t key[CRADLE_KEYS_PUBLIC_BYTES]) {
    sodium_bin2hex(out, CRADLE_KEYS_HEX_SIZE, key, CRADLE_KEYS_PUBLIC_BYTES);
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int cradle_keys_from_hex(uint8_t key[CRADLE_KEYS_PUBLIC_BYTES], const char *hex) {
    for (size_t i = 0; i < CRADLE_KEYS_PUBLIC_BYTES; i++) {
        int hi = hex_digit(hex[2 * i]);
        int lo = hi < 0 ? -1 : hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            memset(key, 0, CRADLE_KEYS_PUBLIC_BYTES);
            return CRADLE_EINVAL;
        }
        key[i] = (uint8_t)(hi << 4 | lo);
    }
    if (hex[2 * CRADLE_KEYS_PUBLIC_BYTES] != '\0') {
        memset(key, 0, CRADLE_KEYS_PUBLIC_BYTES);
        return CRADLE_EINVAL;
    }
    return 0;
}
