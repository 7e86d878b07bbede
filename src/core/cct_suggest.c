/*
 * cct_suggest.c - nearest-word suggestions (see cct_suggest.h).
 *
 * Optimal-string-alignment distance (Levenshtein plus adjacent transposition), computed
 * with three rolling rows on the stack.  Words longer than SUGGEST_MAX_LEN never get a
 * suggestion: keys and names are short, and the bound keeps the cost of a hostile input
 * (a megabyte-long key) constant instead of quadratic.
 */
#include "cct_suggest.h"

#include <ctype.h>
#include <string.h>

#define SUGGEST_MAX_LEN 64

static size_t min3(size_t a, size_t b, size_t c)
{
    size_t m = a < b ? a : b;
    return m < c ? m : c;
}

static size_t osa_distance(const char *a, size_t la, const char *b, size_t lb)
{
    size_t rows[3][SUGGEST_MAX_LEN + 1];
    size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
            size_t cost = ca != cb;
            cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && prev2[j - 2] + 1 < cur[j])
                cur[j] = prev2[j - 2] + 1;
        }
        size_t *t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}

const char *cct_suggest(const char *word, const char *const *candidates, size_t n)
{
    size_t lw = strlen(word);
    if (lw == 0 || lw > SUGGEST_MAX_LEN)
        return NULL;
    size_t limit = lw <= 4 ? 1 : 2;
    const char *best = NULL;
    size_t best_d = limit + 1;
    for (size_t i = 0; i < n; i++) {
        size_t lc = strlen(candidates[i]);
        if (lc > SUGGEST_MAX_LEN || (lc > lw ? lc - lw : lw - lc) > limit)
            continue;
        size_t d = osa_distance(word, lw, candidates[i], lc);
        if (d < best_d) {
            best = candidates[i];
            best_d = d;
        }
    }
    return best;
}
