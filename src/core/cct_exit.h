/*
 * cct_exit.h - the process exit statuses of `ccltune` and of the processes it starts.
 *
 * The command picks them (src/cli); the search's launchers also read them back from the
 * worker processes they start, which run the same binary.
 */
#ifndef CCT_EXIT_H
#define CCT_EXIT_H

enum { CCT_EXIT_OK = 0, CCT_EXIT_FAIL = 1, CCT_EXIT_USAGE = 2, CCT_EXIT_SKIP = 77 };

#endif
