/*
 * test_json.c - the JSON reader behind the nccl-tests -J importer (src/cct_json.c): the
 * document model (members, order, positions), string unescaping to UTF-8, the spellings
 * nccl-tests writes (nan/inf), and every refusal with its line and column -- including
 * nesting past the limit, which must fail cleanly rather than recurse.
 */
#include "import_test_util.h"

#include "cct_json.h"
#include "cct_json_write.h"

static void parse_ok(cct_json_doc *d, const char *text)
{
    cct_error err;
    cct_json_init(d);
    if (cct_json_parse(d, text, strlen(text), "t.json", &err) != CCT_OK)
        fail_msg("%s", err.msg);
}

static void parse_fails(const char *text, size_t len, const char *expect)
{
    cct_json_doc d;
    cct_error err;
    cct_json_init(&d);
    assert_int_equal(cct_json_parse(&d, text, len, "t.json", &err) != CCT_OK, 1);
    tu_assert_contains(err.msg, expect);
    assert_null(cct_json_root(&d)); /* nothing left behind */
    cct_json_destroy(&d);
}

static void document_model(void **state)
{
    (void)state;
    cct_json_doc d;
    parse_ok(&d, "{\"a\": [1, -2.5e3, \"x\", true, false, null],\n"
                 "  \"b\": {\"c\": {}}, \"d\": []}");
    const cct_json_node *root = cct_json_root(&d);
    assert_int_equal(root->type, CCT_JSON_OBJECT);
    assert_int_equal(root->count, 3);
    const cct_json_node *a = cct_json_member(&d, root, "a");
    assert_int_equal(a->type, CCT_JSON_ARRAY);
    assert_int_equal(a->count, 6);
    const cct_json_node *e = cct_json_first(&d, a);
    assert_string_equal(cct_json_text(&d, e), "1");
    e = cct_json_next(&d, e);
    assert_int_equal(e->type, CCT_JSON_NUMBER);
    assert_string_equal(cct_json_text(&d, e), "-2.5e3");
    e = cct_json_next(&d, e);
    assert_string_equal(cct_json_text(&d, e), "x");
    e = cct_json_next(&d, e);
    assert_true(e->type == CCT_JSON_BOOL && e->boolean);
    e = cct_json_next(&d, e);
    assert_true(e->type == CCT_JSON_BOOL && !e->boolean);
    e = cct_json_next(&d, e);
    assert_int_equal(e->type, CCT_JSON_NULL);
    assert_null(cct_json_next(&d, e));
    const cct_json_node *b = cct_json_member(&d, root, "b");
    assert_int_equal(b->line, 2);
    assert_int_equal(b->col, 8); /* where its value starts */
    assert_int_equal(cct_json_member(&d, b, "c")->count, 0);
    assert_null(cct_json_member(&d, root, "z"));
    assert_null(cct_json_member(&d, a, "a")); /* not an object */
    assert_string_equal(cct_json_key(&d, b), "b");
    cct_json_destroy(&d);
}

static void strings_and_numbers(void **state)
{
    (void)state;
    cct_json_doc d;
    parse_ok(&d, "[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\", \"\\u00e9\\u20ac\", \"\\ud83d\\ude00\", "
                 "nan, -inf, inf, -nan, 0, -0.0, 1E+2]");
    const cct_json_node *e = cct_json_first(&d, cct_json_root(&d));
    assert_string_equal(cct_json_text(&d, e), "\"\\/\b\f\n\r\t");
    e = cct_json_next(&d, e);
    assert_string_equal(cct_json_text(&d, e), "\xC3\xA9\xE2\x82\xAC");
    e = cct_json_next(&d, e);
    assert_string_equal(cct_json_text(&d, e), "\xF0\x9F\x98\x80");
    static const char *const numbers[] = {"nan", "-inf", "inf", "-nan", "0", "-0.0", "1E+2"};
    for (int i = 0; i < 7; i++) {
        e = cct_json_next(&d, e);
        assert_int_equal(e->type, CCT_JSON_NUMBER);
        assert_string_equal(cct_json_text(&d, e), numbers[i]);
    }
    cct_json_destroy(&d);
}

static void refusals(void **state)
{
    (void)state;
    parse_fails("", 0, "t.json:1:1: empty input");
    parse_fails("  \n ", 4, "t.json:2:2: empty input");
    parse_fails("{\"a\": [1, 2", 11, "t.json:1:12: unexpected end: the JSON is truncated");
    parse_fails("{\"a\": 1,\n \"a\": 2}", 17, "t.json:2:2: duplicate member name");
    parse_fails("{\"a\" 1}", 7, "t.json:1:6: expected ':'");
    parse_fails("{a: 1}", 6, "t.json:1:2: expected a member name");
    parse_fails("[1 2]", 5, "t.json:1:4: expected ',' or ']'");
    parse_fails("{\"a\": 1]", 8, "t.json:1:8: expected ',' or '}'");
    parse_fails("[1] x", 5, "t.json:1:5: text after the end");
    parse_fails("[01]", 4, "t.json:1:2: bad number");
    parse_fails("[1.]", 4, "t.json:1:2: bad number");
    parse_fails("[-]", 3, "t.json:1:2: bad number");
    parse_fails("[1e]", 4, "t.json:1:2: bad number");
    parse_fails("[nanx]", 6, "t.json:1:2: bad number");
    parse_fails("[\"a\nb\"]", 7, "control character in a string");
    parse_fails("[\"\\u0000\"]", 10, "\\u0000 in a string");
    parse_fails("[\"\\ud83d\"]", 10, "unpaired surrogate");
    parse_fails("[\"\\ude00\"]", 10, "unpaired surrogate");
    parse_fails("[\"\\x\"]", 6, "bad escape");
    parse_fails("[\"abc", 5, "t.json:1:2: unterminated string");
    parse_fails("[tru]", 5, "t.json:1:2: expected a value");
    parse_fails("\x01", 1, "t.json:1:1: unexpected byte: not JSON");
    parse_fails("[1,]", 4, "t.json:1:4: expected a value");
    parse_fails("{\"a\":1,}", 8, "t.json:1:8: expected a member name");
    /* a NUL inside the given length is a byte like any other: not JSON */
    parse_fails("[1]\0", 4, "text after the end");
}

static void nesting_limit(void **state)
{
    (void)state;
    char deep[2 * CCT_JSON_MAX_DEPTH + 8];
    size_t n = 0;
    for (int i = 0; i < CCT_JSON_MAX_DEPTH; i++)
        deep[n++] = '[';
    for (int i = 0; i < CCT_JSON_MAX_DEPTH; i++)
        deep[n++] = ']';
    deep[n] = '\0';
    cct_json_doc d;
    parse_ok(&d, deep); /* exactly the limit */
    cct_json_destroy(&d);
    /* one deeper: refused where it starts, without recursion */
    char *deeper = malloc(100001);
    memset(deeper, '[', 100000);
    deeper[100000] = '\0';
    char where[64];
    snprintf(where, sizeof where, "t.json:1:%d: nested deeper", CCT_JSON_MAX_DEPTH + 1);
    parse_fails(deeper, 100000, where);
    free(deeper);
}

static void member_limit(void **state)
{
    (void)state;
    size_t cap = (CCT_JSON_MAX_MEMBERS + 2) * 16;
    char *text = malloc(cap);
    size_t n = 0;
    text[n++] = '{';
    for (int i = 0; i <= CCT_JSON_MAX_MEMBERS; i++)
        n += (size_t)snprintf(text + n, cap - n, "%s\"k%d\":%d", i ? "," : "", i, i);
    text[n++] = '}';
    text[n] = '\0';
    parse_fails(text, n, "object with too many members");
    free(text);
}

/* The writer every --json output uses: quotes, backslashes and control bytes escaped, other
 * bytes (UTF-8 included) as they are, NULL as the empty string. */
static void string_writer(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    cct_json_write_string(f, "a\"b\\c\n\x01 \xc3\xa9");
    fputc(' ', f);
    cct_json_write_string(f, NULL);
    fclose(f);
    assert_string_equal(text, "\"a\\\"b\\\\c\\u000a\\u0001 \xc3\xa9\" \"\"");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(document_model), cmocka_unit_test(strings_and_numbers),
        cmocka_unit_test(refusals),       cmocka_unit_test(nesting_limit),
        cmocka_unit_test(member_limit),   cmocka_unit_test(string_writer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
