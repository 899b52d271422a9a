/*
** ljlog e2e: a preloaded shim that makes one file behave like a disk that
** fills up, or like a failing device (tests/e2e/limits.sh).
** Environment: WFAIL_PATH (a suffix of the file's path), WFAIL_CALLS (the
** number of write(2) calls to that file that succeed), WFAIL_ERRNO (28
** ENOSPC, 27 EFBIG or 5 EIO). From the next call on, with ENOSPC or
** EFBIG a write that would grow the file past its largest size so far
** writes nothing and fails with it, as on a full disk or at a file-size
** limit (bytes the file already holds can still be overwritten); with
** EIO every write fails.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static long calls;

/* Any thread. 1 when fd is the file named by WFAIL_PATH's suffix. */
static int is_target(int fd)
{
	const char *want = getenv("WFAIL_PATH");
	char link[64], path[4096];
	if (!want || !*want)
		return 0;
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof path - 1);
	if (n < 0)
		return 0;
	path[n] = '\0';
	size_t wl = strlen(want);
	return (size_t)n >= wl && strcmp(path + n - wl, want) == 0;
}

/* Any thread. write(2), failing as configured for the target file. */
ssize_t write(int fd, const void *buf, size_t n)
{
	if (is_target(fd)) {
		long ok =
		    atol(getenv("WFAIL_CALLS") ? getenv("WFAIL_CALLS") : "0");
		int err =
		    atoi(getenv("WFAIL_ERRNO") ? getenv("WFAIL_ERRNO") : "28");
		if (__atomic_add_fetch(&calls, 1, __ATOMIC_SEQ_CST) > ok) {
			struct stat st;
			off_t pos = lseek(fd, 0, SEEK_CUR);
			if ((err != ENOSPC && err != EFBIG) ||
			    fstat(fd, &st) < 0 || pos < 0 ||
			    pos >= st.st_size) {
				errno = err;
				return -1;
			}
			if ((off_t)n > st.st_size - pos)
				n = (size_t)(st.st_size - pos);
		}
	}
	return syscall(SYS_write, fd, buf, n);
}
