#include "cradle/reload.h"

#include <assert.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "cradle/contract.h"
#include "cradle/internal.h"
#include "cradle/os.h"

/* The ELF flavour this process runs: a library of another class or byte order
 * is refused before dlopen, and its headers are parsed with these types. */
#if UINTPTR_MAX > 0xffffffffu
typedef Elf64_Ehdr elf_ehdr;
typedef Elf64_Phdr elf_phdr;
#define ELF_NATIVE_CLASS ELFCLASS64
#else
typedef Elf32_Ehdr elf_ehdr;
typedef Elf32_Phdr elf_phdr;
#define ELF_NATIVE_CLASS ELFCLASS32
#endif
#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && \
    __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define ELF_NATIVE_DATA ELFDATA2MSB
#else
#define ELF_NATIVE_DATA ELFDATA2LSB
#endif

/* load_candidate(): the copy equals the library in use (not an error code). */
#define LOAD_UNCHANGED 1
#define COPY_NAME_ATTEMPTS 64u /* numbered names tried past stale copies */
#define COPY_CHUNK_BYTES 32768u
#define MISSING_SIZE UINT64_MAX
#define MISSING_MTIME INT64_MIN

/* What the loader saw of the original: size and modification time. */
typedef struct file_look {
    uint64_t size;
    int64_t mtime_ns;
} file_look;

/* A freshly loaded library not yet in use. */
typedef struct candidate {
    char copy_path[CRADLE_RELOAD_PATH_MAX];
    void *handle;
    const cradle_game_contract *contract;
    file_look look;  /* the original as copied */
    bool looked;     /* look holds a consistent copy's size and time */
    uint8_t digest[CRADLE_RELOAD_DIGEST_BYTES]; /* BLAKE2b of the bytes copied */
} candidate;

static int64_t mtime_ns_of(const struct stat *st) {
    return (int64_t)st->st_mtim.tv_sec * 1000000000 + (int64_t)st->st_mtim.tv_nsec;
}

static bool read_exact_at(int fd, void *out, size_t count, uint64_t offset) {
    unsigned char *bytes = out;
    while (count > 0) {
        ssize_t n = pread(fd, bytes, count, (off_t)offset);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        bytes += (size_t)n;
        count -= (size_t)n;
        offset += (uint64_t)n;
    }
    return true;
}

/* Checks that the copy is an ELF shared object of this process's class and
 * byte order whose program headers, section headers and segments all lie
 * inside the file.
 * glibc maps segments without comparing them with the file size, and touching
 * a page past the end of a truncated file raises SIGBUS; this check turns a
 * truncated or half-written library into a refusal instead. */
static int check_elf(int fd, uint64_t size, char *message, size_t message_size) {
    elf_ehdr eh;
    if (size < sizeof eh) {
        return cradle__say(CRADLE_ERELOAD_OPEN, message, message_size,
                   "file size %llu < ELF header size %zu (truncated?)", (unsigned long long)size,
                   sizeof eh);
    }
    if (!read_exact_at(fd, &eh, sizeof eh, 0)) {
        return cradle__say(CRADLE_ERELOAD_COPY, message, message_size, "cannot read the copy's ELF header");
    }
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
        return cradle__say(CRADLE_ERELOAD_OPEN, message, message_size, "not an ELF file (bad magic)");
    }
    if (eh.e_ident[EI_CLASS] != ELF_NATIVE_CLASS || eh.e_ident[EI_DATA] != ELF_NATIVE_DATA) {
        return cradle__say(CRADLE_ERELOAD_OPEN, message, message_size,
                   "ELF class %u data %u != host class %u data %u", (unsigned)eh.e_ident[EI_CLASS],
                   (unsigned)eh.e_ident[EI_DATA], (unsigned)ELF_NATIVE_CLASS,
                   (unsigned)ELF_NATIVE_DATA);
    }
    if (eh.e_type != ET_DYN) {
        return cradle__say(CRADLE_ERELOAD_OPEN, message, message_size,
                   "ELF type %u != shared object %u", (unsigned)eh.e_type, (unsigned)ET_DYN);
    }
    if (eh.e_phentsize != sizeof(elf_phdr) || eh.e_phnum == 0) {
        return cradle__say(CRADLE_ERELOAD_OPEN, message, message_size,
                   "ELF program header size %u != %zu or count %u == 0", (unsigned)eh.e_phentsize,
                   sizeof(elf_phdr), (unsigned)eh.e_phnum);
    }
    uint64_t table_bytes = (uint64_t)eh.e_phnum * sizeof(elf_phdr);
    if (eh.e_phoff > size || table_bytes > size - eh.e_phoff) {
        return cradle__say(CRADLE_ERELOAD_OPEN, message, message_size,
                   "ELF program headers end at byte %llu > file size %llu (truncated?)",
                   (unsigned long long)((uint64_t)eh.e_phoff + table_bytes),
                   (unsigned long long)size);
    }
    /* Linkers put the section header table last: a file cut anywhere loses
     * it, even where every segment survived (the debug info comes after). */
    uint64_t section_bytes = (uint64_t)eh.e_shnum * eh.e_shentsize;
    if (eh.e_shoff != 0 && (eh.e_shoff > size || section_bytes > size - eh.e_shoff)) {
        return cradle__say(CRADLE_ERELOAD_OPEN, message, message_size,
                   "ELF section headers end at byte %llu > file size %llu (truncated?)",
                   (unsigned long long)((uint64_t)eh.e_shoff + section_bytes),
                   (unsigned long long)size);
    }
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        elf_phdr ph;
        if (!read_exact_at(fd, &ph, sizeof ph, (uint64_t)eh.e_phoff + i * sizeof ph)) {
            return cradle__say(CRADLE_ERELOAD_COPY, message, message_size,
                       "cannot read the copy's program header %u", i);
        }
        if (ph.p_filesz == 0) continue;
        if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset) {
            return cradle__say(CRADLE_ERELOAD_OPEN, message, message_size,
                       "ELF segment %u ends at byte %llu > file size %llu (truncated?)", i,
                       (unsigned long long)((uint64_t)ph.p_offset + ph.p_filesz),
                       (unsigned long long)size);
        }
    }
    return CRADLE_OK;
}

/* Checks the opened original: a regular file below the size bound. */
static int check_source(const cradle_reload *r, int src, struct stat *before, char *message, size_t message_size) {
    if (fstat(src, before) != 0) {
        return cradle__say(CRADLE_ERELOAD_COPY, message, message_size, "cannot stat %s: %s", r->path,
                   strerror(errno));
    }
    if (!S_ISREG(before->st_mode)) {
        return cradle__say(CRADLE_ERELOAD_COPY, message, message_size, "%s is not a regular file", r->path);
    }
    uint64_t size = (uint64_t)before->st_size;
    if (size >= r->file_size_bound) {
        return cradle__say(CRADLE_ERELOAD_FILE_SIZE, message, message_size,
                   "file size %llu bytes >= bound %llu bytes", (unsigned long long)size,
                   (unsigned long long)r->file_size_bound);
    }
    return CRADLE_OK;
}

/* Creates the next numbered copy file, opened in *dst. On failure no file
 * was made and c->copy_path is empty. */
static int create_copy(cradle_reload *r, candidate *c, int *dst, char *message, size_t message_size) {
    /* O_EXCL: a stale file of that name (left by a killed host whose pid
     * was recycled, as happens at every container restart) is never
     * overwritten or loaded; the next number is tried instead, a bounded
     * number of times. 0600: the copy is executable code. */
    for (unsigned attempt = 0; attempt < COPY_NAME_ATTEMPTS; attempt++) {
        r->copies++;
        int n = snprintf(c->copy_path, sizeof c->copy_path, "%s/%s.cradle-%ld-%llu.so", r->copy_dir,
                         r->basename, r->pid, (unsigned long long)r->copies);
        if (n < 0 || (size_t)n >= sizeof c->copy_path) {
            c->copy_path[0] = '\0';
            return cradle__say(CRADLE_ERELOAD_COPY, message, message_size,
                       "copy path length %d >= maximum %u", n, (unsigned)CRADLE_RELOAD_PATH_MAX);
        }
        *dst = open(c->copy_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (*dst >= 0 || errno != EEXIST) break;
    }
    if (*dst < 0) {
        int rc = cradle__say(CRADLE_ERELOAD_COPY, message, message_size, "cannot create %s: %s",
                     c->copy_path, strerror(errno));
        c->copy_path[0] = '\0';
        return rc;
    }
    return CRADLE_OK;
}

/* Copies src to dst to the end, hashing the bytes into digest and counting
 * them in *total; a file that grows to the size bound is refused. */
static int copy_bytes(const cradle_reload *r, const candidate *c, int src, int dst,
                      crypto_generichash_state *digest, uint64_t *total, char *message, size_t message_size) {
    unsigned char chunk[COPY_CHUNK_BYTES];
    for (;;) {
        ssize_t got = read(src, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            return cradle__say(CRADLE_ERELOAD_COPY, message, message_size, "cannot read %s: %s", r->path,
                       strerror(errno));
        }
        if (got == 0) return CRADLE_OK;
        *total += (uint64_t)got;
        if (*total >= r->file_size_bound) {
            return cradle__say(CRADLE_ERELOAD_FILE_SIZE, message, message_size,
                       "file size >= %llu bytes (grew while copied) >= bound %llu bytes",
                       (unsigned long long)*total, (unsigned long long)r->file_size_bound);
        }
        (void)crypto_generichash_update(digest, chunk, (unsigned long long)got);
        if (!cradle_os_write_all(dst, chunk, (size_t)got)) {
            return cradle__say(CRADLE_ERELOAD_COPY, message, message_size, "cannot write %s: %s",
                       c->copy_path, strerror(errno));
        }
    }
}

/* Refuses a copy of a build still writing the file: its size or mtime moved
 * while it was read, or fewer or more bytes came than it had; the next
 * change settles again. */
static int check_unchanged(const cradle_reload *r, int src, const struct stat *before, uint64_t total,
                           char *message, size_t message_size) {
    struct stat after;
    if (fstat(src, &after) != 0) {
        return cradle__say(CRADLE_ERELOAD_COPY, message, message_size, "cannot stat %s: %s", r->path,
                   strerror(errno));
    }
    uint64_t size = (uint64_t)before->st_size;
    if ((uint64_t)after.st_size != size || mtime_ns_of(&after) != mtime_ns_of(before) || total != size) {
        return cradle__say(CRADLE_ERELOAD_COPY, message, message_size,
                   "file changed while copied (size %llu -> %llu bytes, %llu read)",
                   (unsigned long long)size, (unsigned long long)after.st_size,
                   (unsigned long long)total);
    }
    return CRADLE_OK;
}

/* Copies the original to a new numbered file and checks it as a file: regular,
 * below the size bound, unchanged while read, a complete ELF image. On
 * failure nothing is left on disk (the caller unlinks nothing). */
static int copy_library(cradle_reload *r, candidate *c, char *message, size_t message_size) {
    int dst = -1;
    int src = open(r->path, O_RDONLY | O_CLOEXEC);
    if (src < 0) {
        return cradle__say(CRADLE_ERELOAD_COPY, message, message_size, "cannot open %s: %s", r->path,
                   strerror(errno));
    }
    struct stat before;
    int rc = check_source(r, src, &before, message, message_size);
    if (rc == CRADLE_OK) rc = create_copy(r, c, &dst, message, message_size);
    if (rc != CRADLE_OK) {
        (void)close(src);
        return rc;
    }
    uint64_t size = (uint64_t)before.st_size, total = 0;
    crypto_generichash_state digest;
    (void)crypto_generichash_init(&digest, NULL, 0, sizeof c->digest);
    rc = copy_bytes(r, c, src, dst, &digest, &total, message, message_size);
    if (rc == CRADLE_OK) rc = check_unchanged(r, src, &before, total, message, message_size);
    if (rc == CRADLE_OK) {
        c->look = (file_look){.size = size, .mtime_ns = mtime_ns_of(&before)};
        c->looked = true;
        (void)crypto_generichash_final(&digest, c->digest, sizeof c->digest);
        rc = check_elf(dst, size, message, message_size);
    }
    if (rc == CRADLE_OK && close(dst) != 0) {
        dst = -1;
        rc = cradle__say(CRADLE_ERELOAD_COPY, message, message_size, "cannot write %s: %s",
                 c->copy_path, strerror(errno));
    }
    if (rc != CRADLE_OK) {
        if (dst >= 0) (void)close(dst);
        (void)unlink(c->copy_path);
        c->copy_path[0] = '\0';
    }
    (void)close(src);
    return rc;
}

/* Closes and deletes whatever a candidate holds. */
static void discard(candidate *c) {
    if (c->handle) (void)dlclose(c->handle);
    if (c->copy_path[0]) (void)unlink(c->copy_path);
    c->handle = NULL;
    c->contract = NULL;
    c->copy_path[0] = '\0';
}

/* The library must be the game the session started with: the state block,
 * the snapshot layout and the session log all depend on these fields. */
static int check_same_game(const cradle_reload *r, const cradle_game_contract *g, char *message,
                           size_t message_size) {
    if (strcmp(g->name, r->game_name) != 0) {
        return cradle__say(CRADLE_ERELOAD_MISMATCH, message, message_size,
                   "game name \"%s\" != \"%s\" of the first library", g->name, r->game_name);
    }
    if (g->input_bytes != r->input_bytes) {
        return cradle__say(CRADLE_ERELOAD_MISMATCH, message, message_size,
                   "input bytes %u != %u of the first library", (unsigned)g->input_bytes,
                   (unsigned)r->input_bytes);
    }
    if (g->max_players != r->max_players) {
        return cradle__say(CRADLE_ERELOAD_MISMATCH, message, message_size,
                   "max players %u != %u of the first library", (unsigned)g->max_players,
                   (unsigned)r->max_players);
    }
    if (g->steps_per_second != r->steps_per_second) {
        return cradle__say(CRADLE_ERELOAD_MISMATCH, message, message_size,
                   "steps per second %u != %u of the first library",
                   (unsigned)g->steps_per_second, (unsigned)r->steps_per_second);
    }
    if (g->source_frames_per_second != r->source_frames_per_second) {
        return cradle__say(CRADLE_ERELOAD_MISMATCH, message, message_size,
                   "source frames per second %u != %u of the first library",
                   (unsigned)g->source_frames_per_second, (unsigned)r->source_frames_per_second);
    }
    return CRADLE_OK;
}

/* Opens the copy at c->copy_path and checks its contract (and, unless it
 * is the first library, that it is the same game). On failure the handle
 * is closed again; the file stays for the caller to delete or keep. */
static int open_copy(const cradle_reload *r, candidate *c, bool first, char *message, size_t message_size) {
    int rc;
    (void)dlerror();
    c->handle = dlopen(c->copy_path, RTLD_NOW | RTLD_LOCAL);
    if (!c->handle) {
        const char *why = dlerror();
        return cradle__say(CRADLE_ERELOAD_OPEN, message, message_size, "dlopen failed: %s",
                           why ? why : "unknown reason");
    }
    (void)dlerror();
    void *symbol = dlsym(c->handle, CRADLE_GAME_CONTRACT_SYMBOL);
    if (!symbol) {
        rc = cradle__say(CRADLE_ERELOAD_SYMBOL, message, message_size,
                 "contract symbol %s not found in %s", CRADLE_GAME_CONTRACT_SYMBOL, r->basename);
        goto out_close;
    }
    /* ISO C has no object-to-function pointer conversion; POSIX guarantees
     * the representation is the same, so copy the bits. */
    cradle_game_contract_fn get_contract;
    _Static_assert(sizeof get_contract == sizeof symbol, "function and data pointers differ");
    memcpy(&get_contract, &symbol, sizeof get_contract);
    c->contract = get_contract();
    cradle_contract_limits limits = cradle_contract_host_limits();
    limits.max_state_align = r->max_state_align;
    limits.state_capacity = r->state_capacity;
    rc = cradle_contract_check(c->contract, &limits, message, message_size);
    if (rc != CRADLE_OK) goto out_close;
    if (!first) {
        rc = check_same_game(r, c->contract, message, message_size);
        if (rc != CRADLE_OK) goto out_close;
    }
    return CRADLE_OK;

out_close:
    (void)dlclose(c->handle);
    c->handle = NULL;
    c->contract = NULL;
    return rc;
}

/* Copies, opens and checks a new library. On failure the candidate holds
 * nothing (no handle, no file) except possibly its look at the original. */
static int load_candidate(cradle_reload *r, candidate *c, bool first, bool skip_unchanged,
                          char *message, size_t message_size) {
    int rc = copy_library(r, c, message, message_size);
    if (rc != CRADLE_OK) return rc;
    if (skip_unchanged && sodium_memcmp(c->digest, r->digest, sizeof r->digest) == 0) {
        discard(c);
        return LOAD_UNCHANGED;
    }
    if (r->staging && !first) return CRADLE_OK; /* opened after its trial, or never */
    rc = open_copy(r, c, first, message, message_size);
    if (rc != CRADLE_OK) discard(c);
    return rc;
}

int cradle_reload_open(cradle_reload *r, const cradle_reload_config *config, uint64_t now_ns,
                       char *message, size_t message_size) {
    assert(r && config && config->path);
    assert((message || message_size == 0) && "a message size needs a buffer");
    assert((config->max_state_align & (config->max_state_align - 1u)) == 0 &&
           "max_state_align is 0 or a power of two");
    memset(r, 0, sizeof *r);
    if (message && message_size > 0) message[0] = '\0';

    size_t path_len = strlen(config->path);
    if (path_len == 0 || path_len >= sizeof r->path) {
        return cradle__say(CRADLE_EINVAL, message, message_size, "library path length %zu not in 1..%u",
                   path_len, (unsigned)(CRADLE_RELOAD_PATH_MAX - 1u));
    }
    memcpy(r->path, config->path, path_len + 1);
    const char *slash = strrchr(r->path, '/');
    r->basename = slash ? slash + 1 : r->path;
    if (r->basename[0] == '\0') {
        return cradle__say(CRADLE_EINVAL, message, message_size, "library path %s names a directory",
                   r->path);
    }
    if (config->copy_dir) {
        size_t dir_len = strlen(config->copy_dir);
        if (dir_len == 0 || dir_len >= sizeof r->copy_dir) {
            return cradle__say(CRADLE_EINVAL, message, message_size, "copy dir length %zu not in 1..%u",
                       dir_len, (unsigned)(CRADLE_RELOAD_PATH_MAX - 1u));
        }
        memcpy(r->copy_dir, config->copy_dir, dir_len + 1);
    } else if (!slash) {
        memcpy(r->copy_dir, ".", 2);
    } else if (slash == r->path) {
        memcpy(r->copy_dir, "/", 2);
    } else {
        size_t dir_len = (size_t)(slash - r->path);
        memcpy(r->copy_dir, r->path, dir_len);
        r->copy_dir[dir_len] = '\0';
    }
    r->max_state_align =
        config->max_state_align ? config->max_state_align : CRADLE_RELOAD_DEFAULT_MAX_ALIGN;
    r->file_size_bound =
        config->file_size_bound ? config->file_size_bound : CRADLE_RELOAD_DEFAULT_FILE_SIZE_BOUND;
    r->settle_ns = config->settle_ns ? config->settle_ns : CRADLE_RELOAD_DEFAULT_SETTLE_NS;
    r->state_capacity = config->state_capacity; /* 0: no limit for the first library */
    r->staging = config->stage;
    r->pid = (long)getpid();
    cradle_settle_init(&r->settle, r->settle_ns);

    candidate c = {.handle = NULL};
    char scratch[CRADLE_RELOAD_MESSAGE_MAX];
    char *msg = message && message_size > 0 ? message : scratch;
    size_t msg_size = message && message_size > 0 ? message_size : sizeof scratch;
    if (sodium_init() < 0) {
        memset(r, 0, sizeof *r);
        return cradle__say(CRADLE_EIO, message, message_size, "libsodium failed to initialise");
    }
    int rc = load_candidate(r, &c, true, false, msg, msg_size);
    if (rc != CRADLE_OK) {
        memset(r, 0, sizeof *r);
        return rc;
    }
    const cradle_game_contract *g = c.contract;
    r->handle = c.handle;
    r->contract = g;
    memcpy(r->copy_path, c.copy_path, sizeof r->copy_path);
    memcpy(r->digest, c.digest, sizeof r->digest);
    /* The contract check proved name is 1..CRADLE_GAME_NAME_MAX bytes. */
    memcpy(r->game_name, g->name, cradle_contract_strnlen(g->name, CRADLE_GAME_NAME_MAX) + 1);
    r->input_bytes = g->input_bytes;
    r->max_players = g->max_players;
    r->steps_per_second = g->steps_per_second;
    r->source_frames_per_second = g->source_frames_per_second;
    if (r->state_capacity == 0) r->state_capacity = g->state_size;
    (void)cradle_settle_look(&r->settle, c.look.size, c.look.mtime_ns, now_ns);
    return CRADLE_OK;
}

const cradle_game_contract *cradle_reload_contract(const cradle_reload *r) {
    assert(r && r->contract && "cradle_reload_open succeeded");
    return r->contract;
}

const char *cradle_reload_copy_path(const cradle_reload *r) {
    assert(r && r->contract && "cradle_reload_open succeeded");
    return r->copy_path;
}

/* Puts the opened candidate in charge: the old code is not needed once the
 * new contract is in hand; the state block is the host's and stays where it
 * is. */
static cradle_reload_result swap_in(cradle_reload *r, const candidate *c, cradle_reload_result result) {
    (void)dlclose(r->handle);
    (void)unlink(r->copy_path);
    r->handle = c->handle;
    r->contract = c->contract;
    memcpy(r->copy_path, c->copy_path, sizeof r->copy_path);
    memcpy(r->digest, c->digest, sizeof r->digest);
    r->swaps++;
    result.kind = CRADLE_RELOAD_SWAPPED;
    result.error = CRADLE_OK;
    result.message[0] = '\0';
    result.contract = r->contract;
    return result;
}

/* Loads the original now and swaps on success. The original as copied
 * becomes settle's baseline either way, so one state of the file is acted on
 * once; a file that changed while copied is left for settle to see again.
 * With skip_unchanged, bytes equal to the library in use are no change (a
 * touch, a rebuild that produced the same file): nothing is swapped. When
 * staging, the checked copy waits for the host's trial instead. */
static cradle_reload_result load_and_swap(cradle_reload *r, bool skip_unchanged) {
    cradle_reload_result result = {.kind = CRADLE_RELOAD_NONE, .contract = r->contract};
    candidate c = {.handle = NULL};
    int rc = load_candidate(r, &c, false, skip_unchanged, result.message, sizeof result.message);
    if (c.looked) cradle_settle_rebase(&r->settle, c.look.size, c.look.mtime_ns);
    if (rc == LOAD_UNCHANGED) {
        r->unchanged++;
        return result;
    }
    if (rc != CRADLE_OK) {
        r->refusals++;
        result.kind = CRADLE_RELOAD_REFUSED;
        result.error = rc;
        return result;
    }
    if (r->staging) {
        memcpy(r->staged_path, c.copy_path, sizeof r->staged_path);
        memcpy(r->staged_digest, c.digest, sizeof r->staged_digest);
        result.kind = CRADLE_RELOAD_STAGED;
        return result;
    }
    return swap_in(r, &c, result);
}

cradle_reload_result cradle_reload_poll(cradle_reload *r, uint64_t now_ns) {
    assert(r && r->contract && "cradle_reload_open succeeded");
    if (r->staged_path[0]) /* one build at a time: a later change is seen after its trial */
        return (cradle_reload_result){.kind = CRADLE_RELOAD_NONE, .contract = r->contract};
    struct stat st;
    file_look look = {.size = MISSING_SIZE, .mtime_ns = MISSING_MTIME};
    if (stat(r->path, &st) == 0) {
        look = (file_look){.size = (uint64_t)st.st_size, .mtime_ns = mtime_ns_of(&st)};
    }
    if (!cradle_settle_look(&r->settle, look.size, look.mtime_ns, now_ns)) {
        return (cradle_reload_result){.kind = CRADLE_RELOAD_NONE, .contract = r->contract};
    }
    return load_and_swap(r, true);
}

cradle_reload_result cradle_reload_now(cradle_reload *r) {
    assert(r && r->contract && "cradle_reload_open succeeded");
    assert(!r->staged_path[0] && "the staged build is taken or dropped first");
    return load_and_swap(r, false);
}

int cradle_reload_open_staged(const cradle_reload *r, void **handle, const cradle_game_contract **contract,
                              char *message, size_t message_size) {
    assert(r && r->staged_path[0] && handle && contract && "a build is staged");
    candidate c = {.handle = NULL};
    memcpy(c.copy_path, r->staged_path, sizeof c.copy_path);
    int rc = open_copy(r, &c, false, message, message_size);
    *handle = c.handle;
    *contract = c.contract;
    return rc;
}

cradle_reload_result cradle_reload_take(cradle_reload *r) {
    assert(r && r->staged_path[0] && "a build is staged");
    cradle_reload_result result = {.kind = CRADLE_RELOAD_NONE, .contract = r->contract};
    candidate c = {.handle = NULL};
    memcpy(c.copy_path, r->staged_path, sizeof c.copy_path);
    memcpy(c.digest, r->staged_digest, sizeof c.digest);
    r->staged_path[0] = '\0';
    int rc = open_copy(r, &c, false, result.message, sizeof result.message);
    if (rc != CRADLE_OK) {
        discard(&c);
        r->refusals++;
        result.kind = CRADLE_RELOAD_REFUSED;
        result.error = rc;
        return result;
    }
    return swap_in(r, &c, result);
}

cradle_reload_result cradle_reload_drop(cradle_reload *r, int error, const char *why) {
    assert(r && r->staged_path[0] && error < 0 && why && "a build is staged");
    (void)unlink(r->staged_path);
    r->staged_path[0] = '\0';
    r->refusals++;
    cradle_reload_result result = {.kind = CRADLE_RELOAD_REFUSED, .error = error, .contract = r->contract};
    snprintf(result.message, sizeof result.message, "%s", why);
    return result;
}

void cradle_reload_close(cradle_reload *r) {
    assert(r);
    if (r->staged_path[0]) (void)unlink(r->staged_path);
    r->staged_path[0] = '\0';
    if (r->handle) (void)dlclose(r->handle);
    if (r->copy_path[0]) (void)unlink(r->copy_path);
    r->handle = NULL;
    r->contract = NULL;
    r->copy_path[0] = '\0';
}
