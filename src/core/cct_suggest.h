/*
 * cct_suggest.h - "did you mean ...?" for misspelt keys, names and subcommands.
 *
 * The table loader rejects unknown keys and names; when the unknown word is a near miss of
 * a known one (a typo, a transposition, a missing or doubled letter) the message names the
 * likely intended word.  Pure function, no allocation, no global state.
 */
#ifndef CCT_SUGGEST_H
#define CCT_SUGGEST_H

#include <stddef.h>

/* The candidate closest to word by edit distance (insert, delete, substitute, swap two
 * neighbours; case-insensitive), or NULL when none is close enough to be a plausible typo:
 * at most 1 edit for words up to 4 characters, 2 for longer ones.  Ties go to the earlier
 * candidate.  The returned pointer is one of candidates[]. */
const char *cct_suggest(const char *word, const char *const *candidates, size_t n);

#endif
