/*
 * test_probe_links.c - the arithmetic and the reports of `ccltune probe --links`
 * (src/search/cct_probe_links.c) on synthetic timings, without a GPU.
 *
 * Medians and rates from known samples (a bad sample makes the figure unknown, not wrong),
 * one-way latency from round trips, NCCL's socket interface order and NCCL_SOCKET_IFNAME
 * forms, and the text and JSON reports for one GPU (no pairs) and for two GPUs with a pair
 * that was not measured; the JSON is parsed back with the project's reader.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_json.h"
#include "cct_ll128.h"
#include "cct_probe_links.h"

static void arithmetic(void **state)
{
    (void)state;
    double a[] = {3e-3, 1e-3, 2e-3};
    assert_true(fabs(cct_links_median(a, 3) - 2e-3) < 1e-12);
    double b[] = {4e-3, 1e-3, 3e-3, 2e-3};
    assert_true(fabs(cct_links_median(b, 4) - 2.5e-3) < 1e-12);
    double c[] = {1e-3, 0.0, 2e-3};
    assert_true(isnan(cct_links_median(c, 3)));
    double d[] = {1e-3, NAN};
    assert_true(isnan(cct_links_median(d, 2)));
    assert_true(isnan(cct_links_median(NULL, 0)));
    double e[] = {2e-3, 1e-3, 1e-3}; /* 64 MiB in a median 1 ms */
    assert_true(fabs(cct_links_gbps((size_t)64 << 20, e, 3) - 67.108864) < 1e-9);
    assert_true(fabs(cct_links_oneway_us(2000000ull, 1000) - 1.0) < 1e-12);
    assert_true(isnan(cct_links_oneway_us(2000000ull, 0)));
    assert_true(isnan(cct_links_oneway_us(0, 10)));
}

static void pick(const char *env, const char *const *ifs, int n, const char *want,
                 const char *why_part)
{
    char out[64], why[160];
    cct_links_socket_pick(env, ifs, n, out, sizeof out, why, sizeof why);
    if (strcmp(out, want) != 0 || !strstr(why, why_part))
        fail_msg("env %s: got \"%s\" (%s), want \"%s\" (%s)", env ? env : "-", out, why, want,
                 why_part);
}

static void sockets(void **state)
{
    (void)state;
    const char *all[] = {"lo", "docker0", "eth0", "ib0"};
    pick(NULL, all, 4, "ib0", "InfiniBand");
    pick(NULL, all, 3, "eth0", "not docker");
    pick(NULL, all, 2, "docker0", "docker");
    pick(NULL, all, 1, "lo", "loopback");
    pick(NULL, all, 0, "", "no network interface");
    pick("eth", all, 4, "eth0", "NCCL_SOCKET_IFNAME=eth");
    pick("^lo,docker", all, 4, "eth0", "NCCL_SOCKET_IFNAME");
    pick("=eth", all, 4, "", "selects no interface");
    pick("=ib0", all, 4, "ib0", "NCCL_SOCKET_IFNAME");
}

static char *report(const cct_links *l, const cct_probe_info *info, bool json)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    if (json) {
        fputc('{', f);
        cct_links_print_json(f, l, info);
        fputc('}', f);
    } else {
        cct_links_print(f, l, info, 1);
    }
    fclose(f);
    return buf;
}

static const cct_json_node *at(const cct_json_doc *d, const cct_json_node *n, const char *key)
{
    const cct_json_node *m = cct_json_member(d, n, key);
    if (!m)
        fail_msg("no member %s", key);
    return m;
}

static void one_gpu(void **state)
{
    (void)state;
    static cct_probe_info info;
    static cct_links l;
    info.n_gpus = 1;
    cct_links_init(&l, 1, (size_t)64 << 20, 5, 1000);
    l.h2d_gbps[0] = 53.25;
    l.d2h_gbps[0] = 54.5;
    l.host_lat_us[0] = 1.234;
    l.wall_s = 0.21;
    snprintf(l.socket_if, sizeof l.socket_if, "eth0");
    snprintf(l.socket_why, sizeof l.socket_why, "NCCL's default order");
    char *text = report(&l, &info, false);
    assert_non_null(strstr(text, "64 MiB copies, median of 5; 1000 ping-pong"));
    assert_non_null(strstr(text, "GPU 0 host: H2D 53.2 GB/s, D2H 54.5 GB/s"));
    assert_non_null(strstr(text, "host thread 1.23 us"));
    assert_non_null(strstr(text, "GPU pairs:   none (1 GPU)"));
    assert_non_null(strstr(text, "NET/Socket over eth0"));
    free(text);

    char *js = report(&l, &info, true);
    cct_json_doc d;
    cct_error err;
    cct_json_init(&d);
    assert_int_equal(cct_json_parse(&d, js, strlen(js), "links", &err), CCT_OK);
    const cct_json_node *m = at(&d, cct_json_root(&d), "link_matrix");
    assert_int_equal(at(&d, m, "pairs")->count, 0);
    const cct_json_node *h = cct_json_first(&d, at(&d, m, "host"));
    assert_non_null(h);
    assert_string_equal(cct_json_text(&d, at(&d, h, "h2d_gbps")), "53.25");
    assert_string_equal(cct_json_text(&d, at(&d, h, "latency_us")), "1.234");
    assert_string_equal(cct_json_text(&d, at(&d, at(&d, m, "socket"), "interface")), "eth0");
    cct_json_destroy(&d);
    free(js);
}

static void two_gpus(void **state)
{
    (void)state;
    static cct_probe_info info;
    static cct_links l;
    info.n_gpus = 2;
    info.path[0][1] = info.path[1][0] = CCT_PATH_NVL;
    cct_links_init(&l, 2, (size_t)64 << 20, 5, 1000);
    l.peer_access[0][1] = l.peer_access[1][0] = true;
    l.peer_gbps[0][1] = 380.54;
    l.peer_lat_us[0][1] = 2.5;
    /* 1 -> 0 not measured: NAN */
    char *text = report(&l, &info, false);
    assert_non_null(strstr(text, "380.5 NVL"));
    assert_non_null(strstr(text, "2.50 NVL"));
    assert_non_null(strstr(text, "- NVL"));
    assert_null(strstr(text, "none ("));
    free(text);

    char *js = report(&l, &info, true);
    cct_json_doc d;
    cct_error err;
    cct_json_init(&d);
    assert_int_equal(cct_json_parse(&d, js, strlen(js), "links", &err), CCT_OK);
    const cct_json_node *pairs = at(&d, at(&d, cct_json_root(&d), "link_matrix"), "pairs");
    assert_int_equal(pairs->count, 2);
    const cct_json_node *p = cct_json_first(&d, pairs);
    assert_string_equal(cct_json_text(&d, at(&d, p, "nccl_path")), "NVL");
    assert_string_equal(cct_json_text(&d, at(&d, p, "copy_gbps")), "380.54");
    p = cct_json_next(&d, p);
    assert_int_equal(at(&d, p, "copy_gbps")->type, CCT_JSON_NULL);
    assert_int_equal(at(&d, p, "src")->type, CCT_JSON_NUMBER);
    assert_string_equal(cct_json_text(&d, at(&d, p, "src")), "1");
    cct_json_destroy(&d);
    free(js);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(arithmetic),
        cmocka_unit_test(sockets),
        cmocka_unit_test(one_gpu),
        cmocka_unit_test(two_gpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
