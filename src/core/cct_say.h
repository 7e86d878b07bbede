/*
 * cct_say.h - the one way library code says something to the user: a sink the command
 * installs.
 *
 * Only src/cli prints.  Library stages that report while they run (the search's progress,
 * notes and warnings, its launcher's and workers' lines, the run id a search prints when it
 * completes) hand each message to cct_say, which passes it to the sink installed by the
 * command, or drops it when none is installed (library tests, embedding programs).  The
 * sink gets whole messages with their newlines, in order, tagged with the stream the
 * command should use: CCT_SAY_OUT for results a script reads (a run id), CCT_SAY_ERR for
 * everything else.  The installed sink is process-wide state, set once at start (workers
 * are separate processes that install their own); it is not meant to change while threads
 * run.
 */
#ifndef CCT_SAY_H
#define CCT_SAY_H

#include <stdbool.h>

typedef enum cct_say_stream { CCT_SAY_ERR = 0, CCT_SAY_OUT = 1 } cct_say_stream;

/* Receives one message; text is only valid during the call. */
typedef void (*cct_say_fn)(void *ctx, cct_say_stream stream, const char *text);

/* Install fn (NULL: messages are dropped).  terminal: the sink's CCT_SAY_ERR is a terminal,
 * so progress may redraw one line in place. */
void cct_say_install(cct_say_fn fn, void *ctx, bool terminal);

/* Format and hand one message to the sink; nothing when none is installed. */
void cct_say(cct_say_stream stream, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Whether a sink is installed, and whether it writes to a terminal. */
bool cct_say_enabled(void);
bool cct_say_terminal(void);

#endif
