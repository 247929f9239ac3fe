#ifndef CRADLE_ERRORS_H
#define CRADLE_ERRORS_H
/*
 * errors: the one table of Cradle's error codes.
 *
 * Operations return 0 on success or one of the negative CRADLE_E... codes
 * below; predicates return bool and constructors return NULL. Each row gives
 * the enum name, its value, a stable snake_case name (used on the wire, for
 * example as the dev protocol's "error" field) and a human message.
 * New codes are appended to their module's block; values never change once
 * released, because logs and wire replies carry the names.
 */

#define CRADLE_ERROR_TABLE(X)                                                              \
    /* general */                                                                          \
    X(CRADLE_OK,              0, "ok",                  "success")                         \
    X(CRADLE_EINVAL,         -1, "invalid_argument",    "invalid argument")                \
    X(CRADLE_ENOMEM,         -2, "out_of_memory",       "out of memory")                   \
    X(CRADLE_EIO,            -3, "io_error",            "input/output error")              \
    X(CRADLE_EFULL,          -4, "full",                "capacity exhausted")              \
    X(CRADLE_EEMPTY,         -5, "empty",               "nothing available")               \
    X(CRADLE_ERANGE,         -6, "out_of_range",        "value out of range")              \
    X(CRADLE_ETRUNCATED,     -7, "truncated",           "input ended early")               \
    X(CRADLE_EAGAIN,         -8, "would_block",         "operation would block")           \
    X(CRADLE_ESTALE,         -9, "stale_handle",        "handle refers to a destroyed object") \
    X(CRADLE_EUNSORTED,     -10, "unsorted",            "entries are not sorted by step")  \
    /* clock */                                                                            \
    X(CRADLE_ECLOCK_RATE,   -20, "bad_step_rate",       "steps per second must be at least 1") \
    X(CRADLE_ECLOCK_SOURCE, -21, "bad_source_rate",     "source frames per second must be at least 1 and divide the step rate") \
    /* session */                                                                          \
    X(CRADLE_ESESSION_ORDER,    -30, "non_sequential_step",       "step is not the next in sequence") \
    X(CRADLE_ESESSION_CAPACITY, -31, "session_capacity_exceeded", "session storage is full") \
    /* dev protocol */                                                                     \
    X(CRADLE_EDEV_NOT_JSON,     -40, "not_json",            "request is not valid JSON")  \
    X(CRADLE_EDEV_NOT_OBJECT,   -41, "not_object",          "request is not a JSON object") \
    X(CRADLE_EDEV_NO_CMD,       -42, "missing_cmd",         "request has no \"cmd\" field") \
    X(CRADLE_EDEV_CMD_TYPE,     -43, "cmd_not_string",      "\"cmd\" is not a string")    \
    X(CRADLE_EDEV_UNKNOWN,      -44, "unknown_command",     "unknown command")            \
    X(CRADLE_EDEV_COUNT_MISSING,-45, "count_missing",       "\"count\" is missing")       \
    X(CRADLE_EDEV_COUNT_TYPE,   -46, "count_not_integer",   "\"count\" is not an integer") \
    X(CRADLE_EDEV_COUNT_FLOAT,  -47, "count_not_whole",     "\"count\" has a fractional part") \
    X(CRADLE_EDEV_COUNT_NEG,    -48, "count_negative",      "\"count\" is negative")      \
    X(CRADLE_EDEV_COUNT_ZERO,   -49, "count_zero",          "\"count\" is zero")          \
    X(CRADLE_EDEV_COUNT_MAX,    -50, "count_above_maximum", "\"count\" is above the maximum") \
    X(CRADLE_EDEV_COUNT_HUGE,   -51, "count_too_large",     "\"count\" is absurdly large") \
    X(CRADLE_EDEV_LINE_LONG,    -52, "line_too_long",       "line exceeds 1 MiB")         \
    X(CRADLE_EDEV_ARGUMENT,     -53, "bad_argument",        "bad argument")               \
    X(CRADLE_EDEV_STATE,        -54, "wrong_state",         "command not allowed in this state") \
    /* transport */                                                                        \
    X(CRADLE_ETRANSPORT_PATH,   -60, "socket_path",         "socket path is too long or invalid") \
    X(CRADLE_ETRANSPORT_LIVE,   -61, "socket_in_use",       "a server is already listening at the socket path") \
    X(CRADLE_ETRANSPORT_FOREIGN,-62, "socket_foreign",      "the socket path holds something that is not our socket") \
    X(CRADLE_ETRANSPORT_CONNECT,-63, "no_server",           "no server listens at the socket path") \
    X(CRADLE_ETRANSPORT_DIR,    -64, "socket_dir_unsafe",   "the socket's directory is not a directory, is another user's, or is writable by group or others without the sticky bit") \
    /* reload and the game ABI */                                                          \
    X(CRADLE_ERELOAD_OPEN,      -70, "library_open",        "the game library could not be opened") \
    X(CRADLE_ERELOAD_SYMBOL,    -71, "no_contract",         "the game library exports no contract function") \
    X(CRADLE_ERELOAD_MAJOR,     -72, "abi_major",           "the game's ABI major version differs from the host's") \
    X(CRADLE_ERELOAD_MINOR,     -73, "abi_minor",           "the game's ABI minor version is newer than the host's") \
    X(CRADLE_ERELOAD_ALIGN,     -74, "state_alignment",     "the game's state alignment is not a power of two or is too large") \
    X(CRADLE_ERELOAD_SIZE,      -75, "state_size",          "the game's state is larger than the state capacity") \
    X(CRADLE_ERELOAD_FILE_SIZE, -76, "library_size",        "the game library file is too large") \
    X(CRADLE_ERELOAD_COPY,      -77, "library_copy",        "the game library could not be copied") \
    X(CRADLE_ERELOAD_CONTRACT,  -78, "bad_contract",        "the game's contract has an invalid field") \
    X(CRADLE_ERELOAD_MISMATCH,  -79, "game_mismatch",       "the game library is another game or build") \
    X(CRADLE_ERELOAD_TRIAL,     -80, "reload_trial",        "the new build crashed, hung or was not deterministic in its trial run") \
    /* session log files */                                                                \
    X(CRADLE_ELOG_MAGIC,        -90, "log_magic",           "not a Cradle session log (bad magic)") \
    X(CRADLE_ELOG_VERSION,      -91, "log_version",         "unknown session log format version") \
    X(CRADLE_ELOG_HEADER,       -92, "log_header",          "session log header has an invalid field") \
    X(CRADLE_ELOG_CHECKSUM,     -93, "log_checksum",        "session log block checksum mismatch") \
    X(CRADLE_ELOG_CORRUPT,      -94, "log_corrupt",         "session log is damaged") \
    X(CRADLE_ELOG_GAME,         -95, "log_game",            "session log was recorded with another game") \
    X(CRADLE_ELOG_SIGNATURE,    -96, "log_signature",       "session log signature is missing or invalid") \
    /* network */                                                                          \
    X(CRADLE_ENET_INIT,        -110, "net_init",            "network initialisation failed") \
    X(CRADLE_ENET_MESSAGE,     -111, "bad_message",         "malformed network message") \
    X(CRADLE_ENET_VERSION,     -112, "protocol_version",    "protocol version differs") \
    X(CRADLE_ENET_REFUSED,     -113, "refused",             "the server refused the connection") \
    X(CRADLE_ENET_TIMEOUT,     -114, "timeout",             "the peer did not answer in time") \
    X(CRADLE_ENET_AUTH,        -115, "auth_failed",         "authentication failed") \
    X(CRADLE_ENET_CLOSED,      -116, "closed",              "the server closed the session") \
    /* config */                                                                           \
    X(CRADLE_ECONFIG,          -130, "config",              "invalid configuration") \
    /* the simulation core: what a game returns at run time */                          \
    X(CRADLE_ESIM_INIT,        -140, "game_init",           "the game's init() refused the player count") \
    X(CRADLE_ESIM_STATE,       -141, "state_block_size",    "the state block's size is not the game's state size") \
    X(CRADLE_ESIM_OUTPUT,      -142, "game_output",         "the game's output() claimed more bytes than its buffer holds") \
    X(CRADLE_EDESYNC_REPORT,   -143, "desync_report",       "not a valid desync report") \
    X(CRADLE_EGOLDEN_DIGEST,   -144, "golden_digest",       "not a valid digest golden file") \
    X(CRADLE_EDATA_REFUSED,    -145, "data_refused",        "the game refused a data file") \
    X(CRADLE_EDATA,            -146, "data_file",           "a data file is not one the game declares, or too large for it") \
    X(CRADLE_EBROADCAST,       -147, "broadcast",           "a broadcast document is invalid") \
    X(CRADLE_EINDEX,           -148, "replay_index",        "a replay's keyframe index is invalid") \
    /* security: key files, join tokens, the secure channel, rate limits */              \
    X(CRADLE_EKEY_PERMISSIONS, -200, "key_permissions",     "key file is accessible by group or others (must be 0600)") \
    X(CRADLE_EKEY_FORMAT,      -201, "key_format",          "not a Cradle key file, or a damaged one") \
    X(CRADLE_EKEY_EXISTS,      -202, "key_exists",          "a file already exists at the key path") \
    X(CRADLE_EKEY_NOT_REGULAR, -203, "key_not_regular",     "key path is a symlink or not a regular file") \
    X(CRADLE_EKEY_OWNER,       -204, "key_owner",           "key file is owned by another user") \
    X(CRADLE_ETOKEN_MALFORMED, -210, "token_malformed",     "join token is malformed") \
    X(CRADLE_ETOKEN_SIGNATURE, -211, "token_signature",     "join token signature is invalid or from an untrusted issuer") \
    X(CRADLE_ETOKEN_EXPIRED,   -212, "token_expired",       "join token has expired") \
    X(CRADLE_ETOKEN_FUTURE,    -213, "token_not_yet_valid", "join token was issued in the future") \
    X(CRADLE_ETOKEN_LIFETIME,  -214, "token_lifetime",      "join token lives longer than the server accepts") \
    X(CRADLE_ETOKEN_SERVER,    -215, "token_server",        "join token is for another server") \
    X(CRADLE_ETOKEN_BUILD,     -216, "token_build",         "join token is for another game build") \
    X(CRADLE_ETOKEN_REUSED,    -217, "token_reused",        "join token was already used") \
    X(CRADLE_ETOKEN_CACHE_FULL,-218, "token_cache_full",    "too many live join tokens to remember (retry later)") \
    X(CRADLE_ESECURE_SHORT,    -220, "packet_short",        "secure packet is shorter than its header and tag") \
    X(CRADLE_ESECURE_LONG,     -221, "packet_long",         "secure packet is longer than the largest message") \
    X(CRADLE_ESECURE_AUTH,     -222, "packet_forged",       "secure packet failed authentication") \
    X(CRADLE_ESECURE_REPLAY,   -223, "packet_replayed",     "secure packet counter was already received") \
    X(CRADLE_ESECURE_OLD,      -224, "packet_too_old",      "secure packet counter is behind the replay window") \
    X(CRADLE_ESECURE_EXHAUSTED,-225, "nonce_exhausted",     "the channel's nonce counter is used up (reconnect)") \
    X(CRADLE_ERATE_LIMITED,    -230, "rate_limited",        "too many attempts from this address") \
    /* world: ecs, grid, ring, events */                                                   \
    X(CRADLE_EECS_EXISTS,      -150, "component_exists",    "the entity already has that component") \
    X(CRADLE_EECS_ABSENT,      -151, "component_absent",    "the entity does not have that component") \
    /* WebAssembly modules: a game build's twin for the browser viewer (wasm_module.h) */ \
    X(CRADLE_EWASM,            -160, "wasm_module",         "not a valid WebAssembly module") \
    X(CRADLE_EWASM_NO_SECTION, -161, "wasm_no_section",     "the WebAssembly module has no custom section of that name")

typedef enum cradle_error {
#define CRADLE__ERROR_ENUM(name, value, wire, message) name = (value),
    CRADLE_ERROR_TABLE(CRADLE__ERROR_ENUM)
#undef CRADLE__ERROR_ENUM
} cradle_error;

/* The human message for a code; "unknown error" for a value not in the table. */
const char *cradle_strerror(int code);

/* The stable snake_case name of a code ("non_sequential_step"); "unknown" for
 * a value not in the table. */
const char *cradle_error_name(int code);

#if defined(__GNUC__)
#define CRADLE_MUST_CHECK __attribute__((warn_unused_result))
#else
#define CRADLE_MUST_CHECK
#endif

#endif
