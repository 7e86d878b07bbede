/*
 * cct_search_links.c - the link matrix a search run stores (table link_matrices, schema 4).
 *
 * On a GPU the launcher measures the links once before the run's first session (`ccltune
 * probe --links`, a few seconds; --no-links skips it).  The replay backend has no links of
 * its own, so it stores none unless --links-from names a matrix recorded on the box the
 * replayed store came from: a recorded store and its recorded matrix then travel together.
 * A --links-from file is checked here, before any run starts, with the same reader `fit`
 * uses later (cct_links_parse), so a bad file is a FILE:LINE:COL error and never a stored
 * matrix that no later command can read.
 */
#include <stdlib.h>
#include <string.h>

#include "cct_file.h"
#include "cct_probe_links.h"
#include "cct_search.h"

cct_status cct_search_links_load(cct_search_opts *o, cct_error *err)
{
    if (!o->links_from)
        return CCT_OK;
    char *data = NULL;
    size_t len = 0;
    cct_status st = cct_read_file(o->links_from, &data, &len, err);
    if (st != CCT_OK)
        return st;
    cct_links *l = malloc(sizeof *l);
    if (!l)
        st = cct_error_set(err, CCT_ENOMEM, "out of memory");
    else if (memchr(data, '\0', len))
        st = cct_error_set(err, CCT_EINVAL, "%s: a NUL byte; a link matrix is JSON text",
                           o->links_from);
    else
        st = cct_links_parse(data, len, o->links_from, l, NULL, err);
    free(l);
    if (st != CCT_OK) {
        free(data);
        return st;
    }
    free(o->links_json);
    o->links_json = data;
    return CCT_OK;
}

void cct_search_links_free(cct_search_opts *o)
{
    free(o->links_json);
    o->links_json = NULL;
}
