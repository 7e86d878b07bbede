/*
 * cct_probe_links.c - the arithmetic and the reports of the measured link matrix (see
 * cct_probe_links.h); the measurement itself is in cct_probe_links_measure.c.
 *
 * Figures are medians of a few timed repetitions, so one disturbed copy does not move them;
 * a figure that was not measured (no peer access, a timed-out ping-pong, a GPU's own
 * diagonal) is NAN and printed as "-" (JSON null).  Each pair's cell carries NCCL's name
 * for the path (NVL, PIX, SYS, ...) so a slow "NVL" or a fast "SYS" stands out.
 */
#include "cct_json_write.h"
#include "cct_probe_links.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cct_ll128.h"

void cct_links_init(cct_links *l, int n_gpus, size_t copy_bytes, int reps, int pingpong_iters)
{
    memset(l, 0, sizeof *l);
    l->n_gpus = n_gpus < 0 ? 0 : n_gpus > CCT_PROBE_MAX_GPUS ? CCT_PROBE_MAX_GPUS : n_gpus;
    l->copy_bytes = copy_bytes;
    l->reps = reps;
    l->pingpong_iters = pingpong_iters;
    for (int i = 0; i < CCT_PROBE_MAX_GPUS; i++) {
        l->h2d_gbps[i] = l->d2h_gbps[i] = l->host_lat_us[i] = NAN;
        for (int j = 0; j < CCT_PROBE_MAX_GPUS; j++)
            l->peer_gbps[i][j] = l->peer_lat_us[i][j] = NAN;
    }
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cct_links_median(double *v, int n)
{
    if (n <= 0)
        return NAN;
    for (int i = 0; i < n; i++)
        if (!(v[i] > 0.0))
            return NAN;
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double cct_links_gbps(size_t bytes, double *seconds, int n)
{
    double s = cct_links_median(seconds, n);
    return isnan(s) ? NAN : (double)bytes / s / 1e9;
}

double cct_links_oneway_us(unsigned long long ns, int done)
{
    if (done <= 0 || ns == 0)
        return NAN;
    return (double)ns / (double)done / 2.0 / 1000.0;
}

/* NCCL_SOCKET_IFNAME: "eth,ib" prefixes, "^docker" all but, "=eth0" exact. */
static bool env_selects(const char *env, const char *name)
{
    bool exclude = env[0] == '^', exact;
    const char *p = env + exclude;
    exact = p[0] == '=';
    p += exact;
    bool hit = false;
    while (*p && !hit) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        hit = exact ? (strlen(name) == len && strncmp(name, p, len) == 0)
                    : strncmp(name, p, len) == 0;
        p += len + (comma != NULL);
    }
    return exclude ? !hit : hit;
}

static const char *first_with(const char *const *ifaces, int n, int want)
{
    for (int i = 0; i < n; i++) {
        const char *f = ifaces[i];
        int kind = strncmp(f, "ib", 2) == 0       ? 0
                   : strncmp(f, "docker", 6) == 0 ? 2
                   : strcmp(f, "lo") == 0         ? 3
                                                  : 1;
        if (kind == want)
            return f;
    }
    return NULL;
}

void cct_links_socket_pick(const char *ifname_env, const char *const *ifaces, int n, char *out,
                           size_t out_len, char *why, size_t why_len)
{
    out[0] = '\0';
    if (ifname_env && *ifname_env) {
        for (int i = 0; i < n; i++)
            if (env_selects(ifname_env, ifaces[i])) {
                snprintf(out, out_len, "%s", ifaces[i]);
                break;
            }
        snprintf(why, why_len, "NCCL_SOCKET_IFNAME=%s%s", ifname_env,
                 out[0] ? "" : " selects no interface of this host");
        return;
    }
    static const char *const order[] = {"an InfiniBand (ib*) interface",
                                        "the first interface not docker* or lo",
                                        "a docker* interface (no other)", "loopback (no other)"};
    for (int k = 0; k < 4; k++) {
        const char *f = first_with(ifaces, n, k);
        if (f) {
            snprintf(out, out_len, "%s", f);
            snprintf(why, why_len, "NCCL's default order: %s", order[k]);
            return;
        }
    }
    snprintf(why, why_len, "no network interface found");
}

/* v in unit_fmt, or "-" as wide as the format's field (width 0: unpadded). */
static void cell(FILE *out, double v, const char *unit_fmt, int width)
{
    if (isnan(v))
        fprintf(out, " %*s", width, "-");
    else
        fprintf(out, unit_fmt, v);
}

static void matrix(FILE *out, const cct_links *l, const cct_probe_info *info, bool latency)
{
    fprintf(out, "    %-8s", latency ? "us" : "GB/s");
    for (int j = 0; j < l->n_gpus; j++)
        fprintf(out, " %9s%-2d%-4s", "GPU", j, "");
    fputc('\n', out);
    for (int i = 0; i < l->n_gpus; i++) {
        fprintf(out, "    GPU%-5d", i);
        for (int j = 0; j < l->n_gpus; j++) {
            if (i == j) {
                fprintf(out, " %9s%6s", "X", "");
                continue;
            }
            cell(out, latency ? l->peer_lat_us[i][j] : l->peer_gbps[i][j],
                 latency ? " %9.2f" : " %9.1f", 9);
            fprintf(out, " %-4s%s", cct_path_name(info->path[i][j]),
                    l->peer_access[i][j] ? " " : "*");
        }
        fputc('\n', out);
    }
}

void cct_links_print(FILE *out, const cct_links *l, const cct_probe_info *info, int ranks_per_gpu)
{
    fprintf(out,
            "link matrix:   measured in %.2f s (%zu MiB copies, median of %d; %d ping-pong "
            "round trips)\n",
            l->wall_s, l->copy_bytes >> 20, l->reps, l->pingpong_iters);
    for (int i = 0; i < l->n_gpus; i++) {
        fprintf(out, "  GPU %d host: H2D", i);
        cell(out, l->h2d_gbps[i], " %.1f", 0);
        fprintf(out, " GB/s, D2H");
        cell(out, l->d2h_gbps[i], " %.1f", 0);
        fprintf(out, " GB/s, one-way latency to a host thread");
        cell(out, l->host_lat_us[i], " %.2f", 0);
        fprintf(out, " us\n");
    }
    if (l->n_gpus < 2) {
        fprintf(out, "  GPU pairs:   none (%d GPU)\n", l->n_gpus);
    } else {
        fprintf(out, "  copy bandwidth, row to column, with NCCL's path (* no peer access: "
                     "staged through the host):\n");
        matrix(out, l, info, false);
        fprintf(out, "  one-way latency (ping-pong over peer memory):\n");
        matrix(out, l, info, true);
    }
    fprintf(out, "  sockets:     %s %s (%s)%s\n",
            ranks_per_gpu > 1 ? "these ranks share GPUs and are joined by NCCL's NET/Socket over"
                              : "ranks sharing a GPU would be joined by NCCL's NET/Socket over",
            l->socket_if[0] ? l->socket_if : "(none)", l->socket_why,
            "; same host, so the kernel's network stack carries it (not measured)");
}

static void json_num(FILE *out, double v, const char *fmt)
{
    if (isnan(v))
        fputs("null", out);
    else
        fprintf(out, fmt, v);
}

void cct_links_print_json(FILE *out, const cct_links *l, const cct_probe_info *info)
{
    fprintf(out,
            "\"link_matrix\": {\"wall_s\": %.3f, \"copy_bytes\": %zu, \"reps\": %d, "
            "\"pingpong_iters\": %d, \"host\": [",
            l->wall_s, l->copy_bytes, l->reps, l->pingpong_iters);
    for (int i = 0; i < l->n_gpus; i++) {
        fprintf(out, "%s{\"gpu\": %d, \"h2d_gbps\": ", i ? ", " : "", i);
        json_num(out, l->h2d_gbps[i], "%.2f");
        fprintf(out, ", \"d2h_gbps\": ");
        json_num(out, l->d2h_gbps[i], "%.2f");
        fprintf(out, ", \"latency_us\": ");
        json_num(out, l->host_lat_us[i], "%.3f");
        fputc('}', out);
    }
    fprintf(out, "], \"pairs\": [");
    bool first = true;
    for (int i = 0; i < l->n_gpus; i++)
        for (int j = 0; j < l->n_gpus; j++) {
            if (i == j)
                continue;
            fprintf(out,
                    "%s{\"src\": %d, \"dst\": %d, \"nccl_path\": \"%s\", \"peer_access\": %s, "
                    "\"copy_gbps\": ",
                    first ? "" : ", ", i, j, cct_path_name(info->path[i][j]),
                    l->peer_access[i][j] ? "true" : "false");
            json_num(out, l->peer_gbps[i][j], "%.2f");
            fprintf(out, ", \"latency_us\": ");
            json_num(out, l->peer_lat_us[i][j], "%.3f");
            fputc('}', out);
            first = false;
        }
    fprintf(out, "], \"socket\": {\"interface\": ");
    cct_json_write_string(out, l->socket_if);
    fprintf(out, ", \"why\": ");
    cct_json_write_string(out, l->socket_why);
    fprintf(out, "}}");
}
