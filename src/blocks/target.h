/*
** ljlog output targets: where the process's one log goes. A file (created
** with the user's umask, close-on-exec, never through a symlink that belongs
** to another user), an inherited descriptor (fd=N), or a shell command that
** reads the log on its standard input (file=|COMMAND).
*/
#ifndef LJLOG_BLOCKS_TARGET_H
#define LJLOG_BLOCKS_TARGET_H

#include <stddef.h>
#include <sys/types.h>

struct target {
	int fd;	     /* where blocks are written; -1 when closed */
	pid_t child; /* the command's shell, 0 if none */
};

/* Caller holds the global lock. Open the target: fd >= 0 is an inherited
** descriptor (spec unused), else spec "|COMMAND" starts /bin/sh -c COMMAND
** on a pipe, else spec is a path. 0 or -errno with a message in err. */
int target_open(struct target *t, const char *spec, int fd, char *err,
		size_t errlen);

/* Caller holds the global lock. Close the descriptor, then wait (at most a
** few seconds) for the command to finish; 0 or -errno (the close's), with
** one message on stderr naming spec if the command failed or hangs. */
int target_close(struct target *t, const char *spec);

/* Child side of fork(), single-threaded. Forget the target without closing
** anything the parent still uses; the caller closes t->fd. */
void target_forget_child(struct target *t);

#endif
