/*
 * cct_say.c - the message sink of cct_say.h: format, then hand the text to the installed
 * function.  Messages shorter than 1 KiB are formatted on the stack; longer ones in one
 * allocation (dropped if it fails: a message never costs the caller its status).
 */
#include "cct_say.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static cct_say_fn sink_fn;
static void *sink_ctx;
static bool sink_terminal;

void cct_say_install(cct_say_fn fn, void *ctx, bool terminal)
{
    sink_fn = fn;
    sink_ctx = ctx;
    sink_terminal = fn && terminal;
}

bool cct_say_enabled(void)
{
    return sink_fn != NULL;
}

bool cct_say_terminal(void)
{
    return sink_terminal;
}

void cct_say(cct_say_stream stream, const char *fmt, ...)
{
    if (!sink_fn)
        return;
    char small[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        sink_fn(sink_ctx, stream, small);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big)
        return;
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sink_fn(sink_ctx, stream, big);
    free(big);
}
