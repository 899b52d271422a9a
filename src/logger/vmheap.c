/*
** ljlog and the VM's own allocator: keep it from trimming (see vmheap.h).
*/
#define _GNU_SOURCE
#include "logger/vmheap.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lj_obj.h"

/* Any thread. Copy n bytes at addr into out without faulting: 0, or -1 when
** any of them is not mapped readable. Where process_vm_readv is missing
** (qemu-user) or refused (a seccomp filter), through a pipe: the kernel
** checks a write's source as it checks process_vm_readv's (EFAULT). */
static int read_safely(const void *addr, void *out, size_t n)
{
	struct iovec local = {out, n}, remote = {(void *)addr, n};
	ssize_t r = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	if (r >= 0 || (errno != ENOSYS && errno != EPERM))
		return r == (ssize_t)n ? 0 : -1;
	int fd[2];
	if (n > 4096 || pipe2(fd, O_CLOEXEC) < 0)
		return -1;
	int ok = write(fd[1], addr, n) == (ssize_t)n &&
		 read(fd[0], out, n) == (ssize_t)n;
	close(fd[0]);
	close(fd[1]);
	return ok ? 0 : -1;
}

/* Any thread. The base of the object holding code address p, or NULL. */
static void *object_of(const void *p)
{
	Dl_info di;
	return dladdr(p, &di) && di.dli_fbase ? di.dli_fbase : NULL;
}

/* VM thread only. See vmheap.h. */
struct vmheap_mstate *vmheap_find(lua_State *L, lua_Alloc f, void *ud)
{
	struct vmheap_mstate copy;
	/* lua_gettop: ljlog does not interpose it (logger/preload.c). */
	void *lj = object_of((const void *)(uintptr_t)lua_gettop);
	uintptr_t u = (uintptr_t)ud, page = (uintptr_t)sysconf(_SC_PAGESIZE);

	/* LuaJIT's allocator lives in LuaJIT's object; its state is a chunk
	** (16-byte aligned) in its first mapping. */
	if (!f || !lj || object_of((const void *)(uintptr_t)f) != lj)
		return NULL;
	if (!ud || (u & 15) || read_safely(ud, &copy, sizeof copy) < 0)
		return NULL;
	uintptr_t base = (uintptr_t)copy.seg.base;
	if (copy.prng != (void *)&G(L)->prng || (base & (page - 1)) ||
	    !(base < u && u - base < copy.seg.size) || !copy.top ||
	    (copy.trim_check != VMHEAP_TRIM_DEFAULT &&
	     copy.trim_check != SIZE_MAX))
		return NULL;
	return ud;
}
