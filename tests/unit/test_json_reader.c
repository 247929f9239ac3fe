/* Tests for json_reader: strict JSON into tokens (document order, `next`,
 * counts, lines), every strictness rule refused at the right line with its
 * sentence, and each reader's value and exact message. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "cradle/json_reader.h"

#define CAPACITY 256u

static cradle_json_token tokens[CAPACITY];
static cradle_json_doc doc;
static cradle_json_error error;

/* Parses text (size bytes) and fails the test, naming it, if refused. */
static void parses_bytes(const char *text, size_t size) {
    if (!cradle_json_parse(&doc, text, size, tokens, CAPACITY, &error))
        fail_msg("refused %s: line %u: %s", text, (unsigned)error.line, error.message);
    assert_int_equal(error.line, 0);
    assert_int_equal(error.offset, 0);
    assert_string_equal(error.message, "");
}

static void parses(const char *text) { parses_bytes(text, strlen(text)); }

/* Checks that text (size bytes) is refused at line with message. */
static void refuses_bytes(const char *text, size_t size, uint32_t line, const char *message) {
    if (cradle_json_parse(&doc, text, size, tokens, CAPACITY, &error)) fail_msg("accepted %s", text);
    if (error.line != line || strcmp(error.message, message) != 0)
        fail_msg("%s: line %u: \"%s\", wanted line %u: \"%s\"", text, (unsigned)error.line, error.message,
                 (unsigned)line, message);
    assert_int_equal(doc.count, 0);
}

static void refuses(const char *text, uint32_t line, const char *message) {
    refuses_bytes(text, strlen(text), line, message);
}

/* The reader's refusal, after a reader returned false. */
static void said(bool ok, uint32_t line, const char *message) {
    if (ok) fail_msg("accepted; wanted \"%s\"", message);
    if (error.line != line || strcmp(error.message, message) != 0)
        fail_msg("line %u: \"%s\", wanted line %u: \"%s\"", (unsigned)error.line, error.message, (unsigned)line,
                 message);
}

typedef struct expected_token {
    uint8_t type;
    uint32_t start, length, line, count, next;
} expected_token;

static void test_tokens_in_document_order(void **unused) {
    (void)unused;
    static const char text[] = "{\n"
                               "  \"name\": \"wave\",\n"
                               "  \"count\": 3,\n"
                               "  \"spawns\": [1, {\"x\": -2.5e1}, []],\n"
                               "  \"on\": true, \"off\": false,\r\n"
                               "  \"none\": null,\n"
                               "  \"empty\": {}\n"
                               "}\n";
    parses(text);
    static const expected_token want[] = {
        {CRADLE_JSON_OBJECT, 0, 130, 1, 7, 20},
        {CRADLE_JSON_STRING, 5, 4, 2, 0, 3},    /* "name" */
        {CRADLE_JSON_STRING, 13, 4, 2, 0, 3},   /* "wave" */
        {CRADLE_JSON_STRING, 23, 5, 3, 0, 5},   /* "count" */
        {CRADLE_JSON_NUMBER, 31, 1, 3, 0, 5},   /* 3 */
        {CRADLE_JSON_STRING, 37, 6, 4, 0, 12},  /* "spawns" */
        {CRADLE_JSON_ARRAY, 46, 22, 4, 3, 12},  /* [1, {...}, []] */
        {CRADLE_JSON_NUMBER, 47, 1, 4, 0, 8},   /* 1 */
        {CRADLE_JSON_OBJECT, 50, 13, 4, 1, 11}, /* {"x": -2.5e1} */
        {CRADLE_JSON_STRING, 52, 1, 4, 0, 11},  /* "x" */
        {CRADLE_JSON_NUMBER, 56, 6, 4, 0, 11},  /* -2.5e1 */
        {CRADLE_JSON_ARRAY, 65, 2, 4, 0, 12},   /* [] */
        {CRADLE_JSON_STRING, 73, 2, 5, 0, 14},  /* "on" */
        {CRADLE_JSON_TRUE, 78, 4, 5, 0, 14},
        {CRADLE_JSON_STRING, 85, 3, 5, 0, 16},  /* "off" */
        {CRADLE_JSON_FALSE, 91, 5, 5, 0, 16},
        {CRADLE_JSON_STRING, 102, 4, 6, 0, 18}, /* "none": the CRLF counts as one line */
        {CRADLE_JSON_NULL, 109, 4, 6, 0, 18},
        {CRADLE_JSON_STRING, 118, 5, 7, 0, 20}, /* "empty" */
        {CRADLE_JSON_OBJECT, 126, 2, 7, 0, 20}, /* {} */
    };
    size_t n = sizeof want / sizeof want[0];
    assert_int_equal(doc.count, n);
    assert_ptr_equal(doc.tokens, tokens);
    assert_int_equal(doc.size, sizeof text - 1);
    for (size_t i = 0; i < n; i++) {
        const cradle_json_token *t = &tokens[i];
        if (t->type != want[i].type || t->start != want[i].start || t->length != want[i].length ||
            t->line != want[i].line || t->count != want[i].count || t->next != want[i].next)
            fail_msg("token %zu: type %u start %u length %u line %u count %u next %u", i, t->type, t->start, t->length,
                     t->line, t->count, t->next);
    }
    /* Siblings without recursion: the root's keys, then the array's elements. */
    uint32_t keys = 0;
    for (uint32_t i = 1; i < tokens[0].next; i = tokens[i].next) keys++;
    assert_int_equal(keys, 7);
    uint32_t elements = 0;
    for (uint32_t i = 7; i < tokens[6].next; i = tokens[i].next) elements++;
    assert_int_equal(elements, 3);
    assert_int_equal(cradle_json_member(&doc, 0, "spawns"), 6);
    assert_int_equal(cradle_json_member(&doc, 0, "empty"), 19);
    assert_int_equal(cradle_json_member(&doc, 8, "x"), 10);
    assert_int_equal(cradle_json_member(&doc, 0, "x"), CRADLE_JSON_NONE); /* a grandchild is not a member */
    assert_int_equal(cradle_json_member(&doc, 0, "nam"), CRADLE_JSON_NONE);
    assert_int_equal(cradle_json_member(&doc, 6, "x"), CRADLE_JSON_NONE); /* not an object */
    assert_true(cradle_json_string_is(&doc, 2, "wave"));
    assert_false(cradle_json_string_is(&doc, 4, "3")); /* a number is not a string */
}

static void test_one_value_of_each_kind(void **unused) {
    (void)unused;
    static const struct {
        const char *text;
        uint8_t type;
        uint32_t start, length, line;
    } cases[] = {
        {"3", CRADLE_JSON_NUMBER, 0, 1, 1},
        {" \t\r\n\n -0.0e+0 \n", CRADLE_JSON_NUMBER, 6, 7, 3},
        {"\"\"", CRADLE_JSON_STRING, 1, 0, 1},
        {"\"a\\\"b\"", CRADLE_JSON_STRING, 1, 4, 1},
        {"null", CRADLE_JSON_NULL, 0, 4, 1},
        {"true", CRADLE_JSON_TRUE, 0, 4, 1},
        {"false", CRADLE_JSON_FALSE, 0, 5, 1},
        {"[ ]", CRADLE_JSON_ARRAY, 0, 3, 1},
        {"\n{}", CRADLE_JSON_OBJECT, 1, 2, 2},
        {"1E5", CRADLE_JSON_NUMBER, 0, 3, 1},
        {"123.456e-7", CRADLE_JSON_NUMBER, 0, 10, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        parses(cases[i].text);
        assert_int_equal(doc.count, 1);
        const cradle_json_token *t = &tokens[0];
        if (t->type != cases[i].type || t->start != cases[i].start || t->length != cases[i].length ||
            t->line != cases[i].line || t->count != 0 || t->next != 1)
            fail_msg("%s: type %u start %u length %u line %u", cases[i].text, t->type, t->start, t->length, t->line);
    }
    /* Same keys in different objects are not duplicates. */
    parses("{\"a\": {\"a\": 1}, \"b\": {\"a\": 2}}");
    assert_int_equal(doc.count, 9);
    /* Depth 64 is the limit, not past it. */
    char deep[2 * CRADLE_JSON_MAX_DEPTH + 1];
    memset(deep, '[', CRADLE_JSON_MAX_DEPTH);
    memset(deep + CRADLE_JSON_MAX_DEPTH, ']', CRADLE_JSON_MAX_DEPTH);
    deep[2 * CRADLE_JSON_MAX_DEPTH] = '\0';
    parses(deep);
    assert_int_equal(doc.count, CRADLE_JSON_MAX_DEPTH);
    assert_int_equal(tokens[CRADLE_JSON_MAX_DEPTH - 1].length, 2);
    assert_int_equal(tokens[0].next, CRADLE_JSON_MAX_DEPTH);
    /* Capacity: exactly enough is enough. */
    assert_true(cradle_json_parse(&doc, "{\"a\":[1]}", 9, tokens, 4, &error));
    assert_int_equal(doc.count, 4);
}

static void test_strings_decode(void **unused) {
    (void)unused;
    char out[64];
    parses("[\"a\\\"b\\\\c\\/d\\be\\ff\\ng\\rh\\ti\", \"\\u00e9\\u20AC\\ud83d\\ude00\","
           " \"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\","
           " \"\\u0063ount\", \"a\\u0000b\", \"hello\", 3]");
    assert_true(cradle_json_string(&doc, 1, "s", out, sizeof out, &error));
    assert_string_equal(out, "a\"b\\c/d\be\ff\ng\rh\ti");
    assert_true(cradle_json_string(&doc, 2, "s", out, sizeof out, &error));
    assert_string_equal(out, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"); /* é € 😀 */
    assert_true(cradle_json_string(&doc, 3, "s", out, sizeof out, &error));
    assert_string_equal(out, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"); /* the same, as raw UTF-8 */
    assert_true(cradle_json_string_is(&doc, 2, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));
    assert_true(cradle_json_string_is(&doc, 4, "count"));
    assert_false(cradle_json_string_is(&doc, 4, "coun"));
    assert_false(cradle_json_string_is(&doc, 4, "counts"));
    assert_false(cradle_json_string_is(&doc, 4, ""));
    assert_false(cradle_json_string_is(&doc, 5, "a")); /* a NUL inside is not the string's end */
    said(cradle_json_string(&doc, 5, "title", out, sizeof out, &error), 1, "\"title\" must not hold \\u0000");
    assert_string_equal(out, "");
    char six[6], five[5];
    assert_true(cradle_json_string(&doc, 6, "title", six, sizeof six, &error));
    assert_string_equal(six, "hello");
    said(cradle_json_string(&doc, 6, "title", five, sizeof five, &error), 1,
         "\"title\" must be at most 4 bytes, got 5");
    assert_string_equal(five, "");
    said(cradle_json_string(&doc, 2, "title", five, sizeof five, &error), 1,
         "\"title\" must be at most 4 bytes, got 9");
    said(cradle_json_string(&doc, 7, "title", out, sizeof out, &error), 1, "\"title\" must be a string, got 3");
    said(cradle_json_string(&doc, 0, "title", out, sizeof out, &error), 1, "\"title\" must be a string, got an array");
}

typedef struct refusal {
    const char *text;
    uint32_t line;
    const char *message;
} refusal;

static void test_strictness_refused_at_its_line(void **unused) {
    (void)unused;
    static const refusal cases[] = {
        /* numbers */
        {"01", 1, "a number may not have a leading zero"},
        {"[\n-01]", 2, "a number may not have a leading zero"},
        {"1.", 1, "expected a digit after the decimal point"},
        {"1.e5", 1, "expected a digit after the decimal point"},
        {".5", 1, "expected a value, got '.' (a number needs a digit before its decimal point)"},
        {"+1", 1, "expected a value, got '+' (a number takes no plus sign)"},
        {"-", 1, "expected a digit after '-'"},
        {"-Infinity", 1, "expected a digit after '-'"},
        {"1e", 1, "expected a digit in the exponent"},
        {"1e+", 1, "expected a digit in the exponent"},
        {"0x1F", 1, "JSON has no hexadecimal numbers"},
        {"NaN", 1, "expected a value, got 'N'"},
        {"Infinity", 1, "expected a value, got 'I'"},
        {"1.5.3", 1, "expected the end of the document after its value, got '.'"},
        /* literals */
        {"tru", 1, "expected true, got \"tru\""},
        {"[nul]", 1, "expected null, got \"nul\""},
        {"fals", 1, "expected false, got \"fals\""},
        {"True", 1, "expected a value, got 'T'"},
        {"nulls", 1, "expected the end of the document after its value, got 's'"},
        /* structure */
        {"[1,]", 1, "a trailing comma before ']'"},
        {"{\"a\": 1,\n}", 2, "a trailing comma before '}'"},
        {"[1,,2]", 1, "expected a value, got ','"},
        {"[1 2]", 1, "expected ',' or ']' after an element, got '2'"},
        {"{\"a\":1 \"b\":2}", 1, "expected ',' or '}' after a member, got '\"'"},
        {"{\"a\" 1}", 1, "expected ':' after a key, got '1'"},
        {"{1: 2}", 1, "expected a key (a string) or '}', got '1'"},
        {"{\"a\": 1, 2}", 1, "expected a key (a string) after ',', got '2'"},
        {"[1}", 1, "expected ',' or ']' after an element, got '}'"},
        {"{\"a\": 1]", 1, "expected ',' or '}' after a member, got ']'"},
        {"]", 1, "expected a value, got ']'"},
        {"[1, 2] // two\n", 1, "expected the end of the document after its value, got '/' (JSON has no comments)"},
        {"[1, // one\n2]", 1, "expected a value, got '/' (JSON has no comments)"},
        {"/* c */ 1", 1, "expected a value, got '/' (JSON has no comments)"},
        {"['a']", 1, "expected a value, got a single quote (strings take double quotes)"},
        {"{'a': 1}", 1, "expected a key (a string) or '}', got a single quote (strings take double quotes)"},
        {"1 2", 1, "expected the end of the document after its value, got '2'"},
        {"{}\n\n{}", 3, "expected the end of the document after its value, got '{'"},
        {"\f1", 1, "expected a value, got a form feed (not JSON whitespace)"},
        {"[1,\f2]", 1, "expected a value, got a form feed (not JSON whitespace)"},
        {"\xc2\xa0" "1", 1, "expected a value, got byte 0xc2"}, /* no-break space is not whitespace */
        {"\xef\xbb\xbf{}", 1, "the document begins with a byte order mark (save it as UTF-8 without a BOM)"},
        /* truncated */
        {"", 1, "the document holds no value"},
        {" \n\t\n", 3, "the document holds no value"},
        {"[1, 2", 1, "the document ends inside the array opened at line 1"},
        {"[1, 2,", 1, "the document ends inside the array opened at line 1"},
        {"{\n\"a\": ", 2, "the document ends inside the object opened at line 1"},
        {"{\"a\"", 1, "the document ends inside the object opened at line 1"},
        {"{\"a\":[{\n", 2, "the document ends inside the object opened at line 1"},
        {"\"abc", 1, "the document ends inside a string"},
        {"\"abc\\", 1, "the document ends inside a string"},
        {"\"\xe2\x82", 1, "the document ends inside a UTF-8 character"},
        /* strings */
        {"\"a\tb\"", 1, "control character 0x09 inside a string (write it as an escape, such as \\n or \\u0009)"},
        {"[\n\"a\nb\"]", 2, "control character 0x0a inside a string (write it as an escape, such as \\n or \\u000a)"},
        {"\"\x7f\"", 0, NULL}, /* DEL is not a control character in JSON: accepted (checked below) */
        {"\"\\x41\"", 1,
         "invalid escape: a backslash before 'x' (JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)"},
        {"\"\\'\"", 1,
         "invalid escape: a backslash before a single quote (strings take double quotes) "
         "(JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)"},
        {"\"\\u12\"", 1, "invalid escape: \\u takes four hex digits"},
        {"\"\\u12G4\"", 1, "invalid escape: \\u takes four hex digits"},
        {"\"\\ud800\"", 1, "invalid escape: \\ud800 is a high surrogate without a low one (\\udc00..\\udfff) after it"},
        {"\"\\uD83D\\u0041\"", 1,
         "invalid escape: \\ud83d is a high surrogate without a low one (\\udc00..\\udfff) after it"},
        {"\"\\ud83d\\ud83d\"", 1,
         "invalid escape: \\ud83d is a high surrogate without a low one (\\udc00..\\udfff) after it"},
        {"\"\\udc00\"", 1, "invalid escape: \\udc00 is a low surrogate without a high one before it"},
        {"\"\\ude00\\ud83d\"", 1, "invalid escape: \\ude00 is a low surrogate without a high one before it"},
        /* UTF-8 */
        {"\"\xc0\xaf\"", 1, "invalid UTF-8: overlong encoding (lead byte 0xc0)"},
        {"\"\xc1\xbf\"", 1, "invalid UTF-8: overlong encoding (lead byte 0xc1)"},
        {"\"\xe0\x80\xaf\"", 1, "invalid UTF-8: overlong encoding (bytes 0xe0 0x80)"},
        {"\"\xe0\x9f\xbf\"", 1, "invalid UTF-8: overlong encoding (bytes 0xe0 0x9f)"},
        {"\"\xf0\x8f\xbf\xbf\"", 1, "invalid UTF-8: overlong encoding (bytes 0xf0 0x8f)"},
        {"\"\xed\xa0\x80\"", 1, "invalid UTF-8: a surrogate (U+D800..U+DFFF) (bytes 0xed 0xa0)"},
        {"\"\xed\xbf\xbf\"", 1, "invalid UTF-8: a surrogate (U+D800..U+DFFF) (bytes 0xed 0xbf)"},
        {"\"\xf4\x90\x80\x80\"", 1, "invalid UTF-8: above U+10FFFF (bytes 0xf4 0x90)"},
        {"\"\xf5\x80\x80\x80\"", 1, "invalid UTF-8: byte 0xf5"},
        {"\"\xff\"", 1, "invalid UTF-8: byte 0xff"},
        {"\"\xfe\"", 1, "invalid UTF-8: byte 0xfe"},
        {"\"\x80\"", 1, "invalid UTF-8: continuation byte 0x80 without a lead byte"},
        {"\"\xbf\"", 1, "invalid UTF-8: continuation byte 0xbf without a lead byte"},
        {"\"\xc3(\"", 1, "invalid UTF-8: byte 0x28 after 0xc3 is not a continuation byte"},
        {"\"\xe2\x82(\"", 1, "invalid UTF-8: byte 0x28 after 0xe2 is not a continuation byte"},
        {"\"\xf0\x9f\x98\"", 1, "invalid UTF-8: byte 0x22 after 0xf0 is not a continuation byte"},
        /* keys */
        {"{\n\"a\": 1,\n\"a\": 2}", 3, "duplicate key \"a\" (first at line 2)"},
        {"{\"ab\": 1, \"c\": 2, \"a\\u0062\": 3}", 1, "duplicate key \"a\\u0062\" (first at line 1)"},
        {"{\"a\": {\"b\": 1, \"b\": 2}}", 1, "duplicate key \"b\" (first at line 1)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].message == NULL)
            parses(cases[i].text);
        else
            refuses(cases[i].text, cases[i].line, cases[i].message);
    }
    /* NUL bytes, which a C string cannot hold. */
    refuses_bytes("1\0", 2, 1, "expected the end of the document after its value, got a NUL byte");
    refuses_bytes("[\0]", 3, 1, "expected a value, got a NUL byte");
    refuses_bytes("\"a\0\"", 4, 1,
                  "control character 0x00 inside a string (write it as an escape, such as \\n or \\u0000)");
    refuses_bytes("\0", 1, 1, "expected a value, got a NUL byte");
    /* A document is its size, not its NUL: the same bytes cut short. */
    refuses_bytes("[1, 2]", 5, 1, "the document ends inside the array opened at line 1");
}

static void test_depth_and_capacity(void **unused) {
    (void)unused;
    char deep[2 * CRADLE_JSON_MAX_DEPTH + 8];
    /* 65 arrays, the 65th on line 2. */
    memset(deep, '[', CRADLE_JSON_MAX_DEPTH);
    deep[CRADLE_JSON_MAX_DEPTH] = '\n';
    deep[CRADLE_JSON_MAX_DEPTH + 1] = '[';
    deep[CRADLE_JSON_MAX_DEPTH + 2] = '\0';
    refuses(deep, 2, "nesting deeper than 64 arrays and objects");
    /* Objects count as well. */
    char objects[8 * CRADLE_JSON_MAX_DEPTH + 16] = "";
    for (unsigned i = 0; i <= CRADLE_JSON_MAX_DEPTH; i++) strcat(objects, "{\"a\":");
    refuses(objects, 1, "nesting deeper than 64 arrays and objects");

    cradle_json_token few[4];
    assert_false(cradle_json_parse(&doc, "[1, 2, 3, 4]", 12, few, 4, &error));
    assert_int_equal(error.line, 0);
    assert_string_equal(error.message, "more than 4 values (keys included) in the document");
    assert_int_equal(doc.count, 0);
    assert_false(cradle_json_parse(&doc, "{\"a\": 1, \"b\": 2}", 16, few, 4, &error));
    assert_string_equal(error.message, "more than 4 values (keys included) in the document");
    assert_false(cradle_json_parse(&doc, "1", 1, NULL, 0, &error));
    assert_string_equal(error.message, "more than 0 values (keys included) in the document");
    /* A document past UINT32_MAX - 1 bytes is refused before a byte is read. */
#if SIZE_MAX > UINT32_MAX
    assert_false(cradle_json_parse(&doc, "1", (size_t)UINT32_MAX, tokens, CAPACITY, &error));
    assert_int_equal(error.line, 0);
    assert_string_equal(error.message, "the document is larger than 4294967294 bytes");
#endif
}

/* Each refusal's offset: the byte, counted from 0, where it went wrong. */
static void test_refusals_name_their_byte(void **unused) {
    (void)unused;
    static const struct {
        const char *text;
        uint32_t offset;
    } cases[] = {
        {"01", 1},                   /* the digit after the leading zero */
        {"[1, 2] x", 7},             /* the byte after the value */
        {"[1, 2", 5},                /* the end: the document's size */
        {"\"abc", 4},
        {"", 0},
        {"  ", 2},
        {"{\"a\": tru}", 9},         /* the first byte that is not the word's */
        {"{\"a\": nulL}", 9},
        {"[1,]", 3},                 /* the closing bracket after the comma */
        {"{\"a\" 1}", 5},
        {"\"a\\x\"", 3},             /* the byte after the backslash */
        {"\"a\\u12G4\"", 2},         /* the escape */
        {"\"a\\ud800\"", 2},
        {"\"ab\xc3(\"", 4},          /* the byte that is not a continuation */
        {"\"ab\xff\"", 3},
        {"\"ab\xe2\x82", 5},         /* the end inside a character */
        {"[\"a\tb\"]", 3},           /* the control character */
        {"-x", 1},
        {"1.e5", 2},
        {"0x10", 1},
        {"{\"a\": 1, \"b\": 2, \"a\": 3}", 17}, /* the duplicate key's opening quote */
        {"\xef\xbb\xbf{}", 0},       /* a BOM: the document as a whole */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cradle_json_parse(&doc, cases[i].text, strlen(cases[i].text), tokens, CAPACITY, &error))
            fail_msg("accepted %s", cases[i].text);
        if (error.offset != cases[i].offset)
            fail_msg("%s: offset %u (%s), wanted %u", cases[i].text, (unsigned)error.offset, error.message,
                     (unsigned)cases[i].offset);
    }
    /* Depth: the bracket that goes one deeper. */
    char deep[CRADLE_JSON_MAX_DEPTH + 2];
    memset(deep, '[', CRADLE_JSON_MAX_DEPTH + 1);
    deep[CRADLE_JSON_MAX_DEPTH + 1] = '\0';
    assert_false(cradle_json_parse(&doc, deep, strlen(deep), tokens, CAPACITY, &error));
    assert_int_equal(error.offset, CRADLE_JSON_MAX_DEPTH);
    /* Capacity: where the value that did not fit begins (a string's quote). */
    cradle_json_token few[4];
    assert_false(cradle_json_parse(&doc, "[1, 2, 3, 4]", 12, few, 4, &error));
    assert_int_equal(error.offset, 10);
    assert_false(cradle_json_parse(&doc, "{\"a\": 1, \"bc\": 2}", 17, few, 3, &error));
    assert_int_equal(error.offset, 9);
    /* A refusal after an accepted document leaves no stale offset; a reader
     * names its value's first byte. */
    parses("{\"a\": [1], \"b\": \"x\"}");
    assert_int_equal(error.offset, 0);
    int64_t v;
    said(cradle_json_int(&doc, 5, "b", 0, 9, &v, &error), 1, "\"b\" must be an integer 0..9, got \"x\"");
    assert_int_equal(error.offset, 16);
    said(cradle_json_int(&doc, 2, "a", 0, 9, &v, &error), 1, "\"a\" must be an integer 0..9, got an array");
    assert_int_equal(error.offset, 6);
}

/* ---- readers ---------------------------------------------------------- */

static const char WAVE[] = "{\n"
                           "  \"count\": 3,\n"
                           "  \"speed\": 2.5,\n"
                           "  \"kind\": \"chaser\",\n"
                           "  \"loop\": true,\n"
                           "  \"title\": \"Wave \\u00e9\",\n"
                           "  \"waves\": [1, 2, 3]\n"
                           "}";

static void test_object_fields(void **unused) {
    (void)unused;
    parses(WAVE);
    static const char *const keys[] = {"count", "speed", "kind", "loop", "title", "waves"};
    uint32_t values[7];
    assert_true(cradle_json_object(&doc, 0, "wave", keys, NULL, 6, values, &error));
    assert_int_equal(values[0], 2);
    assert_int_equal(values[1], 4);
    assert_int_equal(values[2], 6);
    assert_int_equal(values[3], 8);
    assert_int_equal(values[4], 10);
    assert_int_equal(values[5], 12);
    /* "title" unknown: named at its key's line. */
    said(cradle_json_object(&doc, 0, "wave", keys, NULL, 4, values, &error), 6, "unknown field \"title\"");
    /* An optional key may be absent; a required one may not. */
    static const char *const more[] = {"count", "speed", "kind", "loop", "title", "waves", "boss"};
    static const bool optional_boss[] = {true, true, true, true, true, true, false};
    assert_true(cradle_json_object(&doc, 0, "wave", more, optional_boss, 7, values, &error));
    assert_int_equal(values[6], CRADLE_JSON_NONE);
    assert_int_equal(values[5], 12);
    said(cradle_json_object(&doc, 0, "wave", more, NULL, 7, values, &error), 1, "missing field \"boss\"");
    static const bool required_boss[] = {true, true, true, true, true, true, true};
    said(cradle_json_object(&doc, 0, "wave", more, required_boss, 7, values, &error), 1, "missing field \"boss\"");
    said(cradle_json_object(&doc, 12, "waves", keys, NULL, 6, values, &error), 7,
         "\"waves\" must be an object, got an array");
    said(cradle_json_object(&doc, 2, "count", keys, NULL, 6, values, &error), 2, "\"count\" must be an object, got 3");
    /* An unknown key is shown as written, cut and with unprintable bytes as '?'. */
    parses("{\"ok\": 1,\n\"\xc3\xa9t\\u00e9 a very long key of more than thirty-two bytes\": 2}");
    static const char *const ok[] = {"ok"};
    said(cradle_json_object(&doc, 0, "root", ok, NULL, 1, values, &error), 2,
         "unknown field \"??t\\u00e9 a very long key of mor...\"");
    parses("{}");
    assert_true(cradle_json_object(&doc, 0, "root", NULL, NULL, 0, NULL, &error));
    said(cradle_json_object(&doc, 0, "root", ok, NULL, 1, values, &error), 1, "missing field \"ok\"");
}

static void test_array_bounds(void **unused) {
    (void)unused;
    parses(WAVE);
    uint32_t count = 99;
    assert_true(cradle_json_array(&doc, 12, "waves", 1, 64, &count, &error));
    assert_int_equal(count, 3);
    assert_true(cradle_json_array(&doc, 12, "waves", 3, 3, &count, &error));
    said(cradle_json_array(&doc, 12, "waves", 4, 64, &count, &error), 7,
         "\"waves\" must be an array of 4..64 elements, got 3");
    said(cradle_json_array(&doc, 12, "waves", 0, 2, &count, &error), 7,
         "\"waves\" must be an array of 0..2 elements, got 3");
    said(cradle_json_array(&doc, 12, "waves", 1, 1, &count, &error), 7,
         "\"waves\" must be an array of 1 element, got 3");
    said(cradle_json_array(&doc, 12, "waves", 2, 2, &count, &error), 7,
         "\"waves\" must be an array of 2 elements, got 3");
    said(cradle_json_array(&doc, 6, "kind", 1, 64, &count, &error), 4,
         "\"kind\" must be an array of 1..64 elements, got \"chaser\"");
    parses("[]");
    said(cradle_json_array(&doc, 0, "waves", 1, 64, &count, &error), 1,
         "\"waves\" must be an array of 1..64 elements, got 0");
}

typedef struct int_case {
    const char *text;
    int64_t min, max;
    bool ok;
    int64_t value;
    const char *message;
} int_case;

static void test_int_range(void **unused) {
    (void)unused;
    static const int_case cases[] = {
        {"3", 1, 64, true, 3, NULL},
        {"64", 1, 64, true, 64, NULL},
        {"3.00", 1, 64, true, 3, NULL},
        {"-0", -1, 1, true, 0, NULL},
        {"-0.0", -1, 1, true, 0, NULL},
        {"0", 1, 64, false, 0, "\"count\" must be an integer 1..64, got 0"},
        {"65", 1, 64, false, 0, "\"count\" must be an integer 1..64, got 65"},
        {"-3", 1, 64, false, 0, "\"count\" must be an integer 1..64, got -3"},
        {"2.5", 1, 64, false, 0, "\"count\" must be an integer 1..64, got 2.5"},
        {"3.10", 1, 64, false, 0, "\"count\" must be an integer 1..64, got 3.10"},
        {"1e2", 1, 1000, false, 0, "\"count\" must be an integer 1..1000, got 1e2"},
        {"0e0", 0, 1, false, 0, "\"count\" must be an integer 0..1, got 0e0"},
        {"\"3\"", 1, 64, false, 0, "\"count\" must be an integer 1..64, got \"3\""},
        {"true", 1, 64, false, 0, "\"count\" must be an integer 1..64, got true"},
        {"null", 1, 64, false, 0, "\"count\" must be an integer 1..64, got null"},
        {"{}", 1, 64, false, 0, "\"count\" must be an integer 1..64, got an object"},
        {"9223372036854775807", INT64_MIN, INT64_MAX, true, INT64_MAX, NULL},
        {"-9223372036854775808", INT64_MIN, INT64_MAX, true, INT64_MIN, NULL},
        {"9223372036854775807.000", INT64_MIN, INT64_MAX, true, INT64_MAX, NULL},
        {"9223372036854775808", INT64_MIN, INT64_MAX, false, 0,
         "\"count\" must be an integer -9223372036854775808..9223372036854775807, got 9223372036854775808"},
        {"-9223372036854775809", INT64_MIN, INT64_MAX, false, 0,
         "\"count\" must be an integer -9223372036854775808..9223372036854775807, got -9223372036854775809"},
        /* 2^64 + 3: wrapping would give 3 */
        {"18446744073709551619", 0, 10, false, 0, "\"count\" must be an integer 0..10, got 18446744073709551619"},
        {"123456789012345678901234567890123456789", 0, 10, false, 0,
         "\"count\" must be an integer 0..10, got 12345678901234567890123456789012..."},
        {"0.000000000000000000000000000001", 0, 10, false, 0,
         "\"count\" must be an integer 0..10, got 0.000000000000000000000000000001"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        parses(cases[i].text);
        int64_t v = 12345;
        bool ok = cradle_json_int(&doc, 0, "count", cases[i].min, cases[i].max, &v, &error);
        if (ok != cases[i].ok) fail_msg("%s: %s", cases[i].text, ok ? "accepted" : error.message);
        if (ok && v != cases[i].value) fail_msg("%s: got %lld", cases[i].text, (long long)v);
        if (!ok) said(ok, 1, cases[i].message);
        if (!ok && v != 12345) fail_msg("%s: *out written on a refusal", cases[i].text);
    }
    parses("[1,\n\n 0]");
    int64_t v;
    said(cradle_json_int(&doc, 2, "waves[1]", 1, 9, &v, &error), 3, "\"waves[1]\" must be an integer 1..9, got 0");
}

typedef struct decimal_case {
    const char *text;
    uint32_t decimals;
    int64_t min, max;
    bool ok;
    int64_t value;
    const char *message;
} decimal_case;

static void test_decimal_exact(void **unused) {
    (void)unused;
    static const decimal_case cases[] = {
        {"2.5", 1, 5, 80, true, 25, NULL},
        {"0.5", 1, 5, 80, true, 5, NULL},
        {"8", 1, 5, 80, true, 80, NULL},
        {"8.000", 1, 5, 80, true, 80, NULL},
        {"25e-1", 1, 5, 80, true, 25, NULL},
        {"0.025E+2", 1, 5, 80, true, 25, NULL},
        {"0.00000000000000000000000000000000000025e37", 1, 5, 80, true, 25, NULL},
        {"250000000000000000000000000000e-29", 1, 5, 80, true, 25, NULL},
        {"1e2", 0, 0, 1000, true, 100, NULL},
        {"-1.25", 2, -200, 0, true, -125, NULL},
        {"-0.05", 2, -200, 0, true, -5, NULL},
        {"0e999999999999999999999999", 1, -10, 10, true, 0, NULL},
        {"-0.0e-7", 1, -10, 10, true, 0, NULL},
        {"3", 9, 0, INT64_MAX, true, 3000000000, NULL},
        {"2.55", 1, 5, 80, false, 0, "\"speed\" takes at most 1 decimal, got 2.55"},
        {"2.555", 2, 5, 800, false, 0, "\"speed\" takes at most 2 decimals, got 2.555"},
        {"2.5", 0, 0, 8, false, 0, "\"speed\" takes no decimals, got 2.5"},
        {"1e-400", 1, 5, 80, false, 0, "\"speed\" takes at most 1 decimal, got 1e-400"},
        {"9", 1, 5, 80, false, 0, "\"speed\" must be 0.5..8.0, got 9"},
        {"0.4", 1, 5, 80, false, 0, "\"speed\" must be 0.5..8.0, got 0.4"},
        {"-1", 1, 5, 80, false, 0, "\"speed\" must be 0.5..8.0, got -1"},
        {"8.1", 1, 5, 80, false, 0, "\"speed\" must be 0.5..8.0, got 8.1"},
        {"1e99999999999999999", 1, 5, 80, false, 0, "\"speed\" must be 0.5..8.0, got 1e99999999999999999"},
        {"-1.51", 2, -150, -5, false, 0, "\"speed\" must be -1.50..-0.05, got -1.51"},
        {"\"fast\"", 1, 5, 80, false, 0, "\"speed\" must be a number 0.5..8.0, got \"fast\""},
        {"false", 3, 500, 8000, false, 0, "\"speed\" must be a number 0.500..8.000, got false"},
        {"[2.5]", 1, 5, 80, false, 0, "\"speed\" must be a number 0.5..8.0, got an array"},
        {"7", 0, -3, 3, false, 0, "\"speed\" must be -3..3, got 7"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        parses(cases[i].text);
        int64_t v = 12345;
        bool ok = cradle_json_decimal(&doc, 0, "speed", cases[i].decimals, cases[i].min, cases[i].max, &v, &error);
        if (ok != cases[i].ok) fail_msg("%s: %s", cases[i].text, ok ? "accepted" : error.message);
        if (ok && v != cases[i].value) fail_msg("%s: got %lld", cases[i].text, (long long)v);
        if (!ok) said(ok, 1, cases[i].message);
    }
    /* The edges of int64_t with 9 decimals. */
    int64_t v;
    parses("9223372036.854775807");
    assert_true(cradle_json_decimal(&doc, 0, "x", 9, INT64_MIN, INT64_MAX, &v, &error));
    assert_true(v == INT64_MAX);
    parses("-9223372036.854775808");
    assert_true(cradle_json_decimal(&doc, 0, "x", 9, INT64_MIN, INT64_MAX, &v, &error));
    assert_true(v == INT64_MIN);
    parses("9223372036.854775808");
    said(cradle_json_decimal(&doc, 0, "x", 9, INT64_MIN, INT64_MAX, &v, &error), 1,
         "\"x\" must be -9223372036.854775808..9223372036.854775807, got 9223372036.854775808");
    parses("9.2233720368547758075");
    said(cradle_json_decimal(&doc, 0, "x", 9, INT64_MIN, INT64_MAX, &v, &error), 1,
         "\"x\" takes at most 9 decimals, got 9.2233720368547758075");
    parses("92233720368.54775808");
    said(cradle_json_decimal(&doc, 0, "x", 9, 0, INT64_MAX, &v, &error), 1,
         "\"x\" must be 0.000000000..9223372036.854775807, got 92233720368.54775808");
}

static void test_bool_choice(void **unused) {
    (void)unused;
    parses("[true, false, 1, null, \"chaser\", \"ch\\u0061ser\", \"boss2\", 3,\n"
           " \"\xc3\xa9\\n and a long tail of more than thirty-two bytes\", \"\"]");
    bool b = false;
    assert_true(cradle_json_bool(&doc, 1, "loop", &b, &error));
    assert_true(b);
    assert_true(cradle_json_bool(&doc, 2, "loop", &b, &error));
    assert_false(b);
    said(cradle_json_bool(&doc, 3, "loop", &b, &error), 1, "\"loop\" must be true or false, got 1");
    said(cradle_json_bool(&doc, 4, "loop", &b, &error), 1, "\"loop\" must be true or false, got null");
    said(cradle_json_bool(&doc, 5, "loop", &b, &error), 1, "\"loop\" must be true or false, got \"chaser\"");

    static const char *const kinds[] = {"drifter", "chaser", "shooter"};
    uint32_t k = 99;
    assert_true(cradle_json_choice(&doc, 5, "kind", kinds, 3, &k, &error));
    assert_int_equal(k, 1);
    k = 99;
    assert_true(cradle_json_choice(&doc, 6, "kind", kinds, 3, &k, &error));
    assert_int_equal(k, 1);
    said(cradle_json_choice(&doc, 7, "kind", kinds, 3, &k, &error), 1,
         "\"kind\" must be one of drifter, chaser, shooter, got \"boss2\"");
    said(cradle_json_choice(&doc, 8, "kind", kinds, 3, &k, &error), 1,
         "\"kind\" must be one of drifter, chaser, shooter, got 3");
    said(cradle_json_choice(&doc, 9, "kind", kinds, 3, &k, &error), 2,
         "\"kind\" must be one of drifter, chaser, shooter, got \"??\\n and a long tail of more tha...\"");
    said(cradle_json_choice(&doc, 10, "kind", kinds, 3, &k, &error), 2,
         "\"kind\" must be one of drifter, chaser, shooter, got \"\"");
    said(cradle_json_choice(&doc, 0, "kind", kinds, 3, &k, &error), 1,
         "\"kind\" must be one of drifter, chaser, shooter, got an array");
    /* A long list is cut, keeping the value that was wrong. */
    static const char *const many[] = {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf",
                                       "hotel", "india", "juliet", "kilo", "lima", "mike", "november",
                                       "oscar", "papa", "quebec", "romeo", "sierra", "tango"};
    said(cradle_json_choice(&doc, 7, "kind", many, 20, &k, &error), 1,
         "\"kind\" must be one of alpha, bravo, charlie, delta, echo, foxtrot, golf, hotel, india, juliet, kilo, lima, "
         "mike, ..., got \"boss2\"");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tokens_in_document_order),
        cmocka_unit_test(test_one_value_of_each_kind),
        cmocka_unit_test(test_strings_decode),
        cmocka_unit_test(test_strictness_refused_at_its_line),
        cmocka_unit_test(test_depth_and_capacity),
        cmocka_unit_test(test_refusals_name_their_byte),
        cmocka_unit_test(test_object_fields),
        cmocka_unit_test(test_array_bounds),
        cmocka_unit_test(test_int_range),
        cmocka_unit_test(test_decimal_exact),
        cmocka_unit_test(test_bool_choice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
