/*
** ljlog dlfind: an address's object and exported function, under the
** loader's lock (see dlfind.h).
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "util/dlfind.h"

#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

/* The loader's strings are read byte by byte, out of ThreadSanitizer's
** sight. The loader's lock orders these reads before a dlclose frees
** them, but TSan cannot see that lock (ld.so is not instrumented), and
** its dl_iterate_phdr interceptor forgets only dlpi_name's characters,
** not the terminating NUL: a libc string function here (strlen, strrchr)
** left a read that TSan reported against lua_close's dlclose of LDoc's
** lfs.so (soak.sh). The volatile reads keep the compiler from making
** them a strlen or memcpy call, which TSan intercepts. */
#if defined(__clang__) || defined(__GNUC__)
#define NO_TSAN __attribute__((no_sanitize("thread")))
#else
#define NO_TSAN
#endif

/* Any thread, the loader's list locked (a dl_iterate_phdr callback). A
** malloc'd copy of the loader's string s, or NULL (no memory). */
NO_TSAN static char *loader_strdup(const char *s)
{
	const volatile char *v = s;
	size_t n = 0;
	char *c;
	while (v[n])
		n++;
	if (!(c = malloc(n + 1)))
		return NULL;
	for (size_t i = 0; i <= n; i++)
		c[i] = v[i];
	return c;
}

/* Any thread, the loader's list locked (a dl_iterate_phdr callback). The
** address a dynamic section entry's pointer stands for: the loader
** rewrote most objects' entries as addresses, and left others (the
** vDSO's) as offsets from the object's base. */
static uintptr_t dyn_ptr(const struct dl_phdr_info *info, uintptr_t v)
{
	return v < info->dlpi_addr ? v + info->dlpi_addr : v;
}

/* Any thread, the loader's list locked (a dl_iterate_phdr callback).
** Whether dynamic symbol y holds ip and is the one dladdr would prefer to
** best: exported, not thread-local, defined, ip inside it (at it when it
** has no size), and starting above best. */
static int sym_better(const struct dl_phdr_info *info, const ElfW(Sym) * y,
		      size_t strsz, uintptr_t ip, const ElfW(Sym) * best)
{
	int bind = ELF64_ST_BIND(y->st_info),
	    vis = ELF64_ST_VISIBILITY(y->st_other);
	uintptr_t a = info->dlpi_addr + y->st_value;
	if ((bind != STB_GLOBAL && bind != STB_WEAK) || vis == STV_HIDDEN ||
	    vis == STV_INTERNAL || ELF64_ST_TYPE(y->st_info) == STT_TLS ||
	    (y->st_shndx == SHN_UNDEF && y->st_value == 0) ||
	    y->st_shndx == SHN_ABS || y->st_name >= strsz || ip < a)
		return 0;
	if (y->st_shndx == SHN_UNDEF || y->st_size == 0 ? ip != a
							: ip - a >= y->st_size)
		return 0;
	return !best || best->st_value < y->st_value;
}

/* Any thread, the loader's list locked (a dl_iterate_phdr callback). The
** exported symbol holding ip in the object info describes, as dladdr
** finds it (the same walk over the hash table, so the same one of several
** aliases), or NULL; *strtab is the object's string table. */
static const ElfW(Sym) *
    sym_at(const struct dl_phdr_info *info, uintptr_t ip, const char **strtab)
{
	const ElfW(Dyn) *d = NULL;
	const ElfW(Sym) *tab = NULL, *best = NULL;
	const Elf32_Word *gnu = NULL, *sysv = NULL;
	size_t strsz = 0;
	int i;
	*strtab = NULL;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			d = (const ElfW(Dyn) *)(info->dlpi_addr +
						info->dlpi_phdr[i].p_vaddr);
	for (; d && d->d_tag != DT_NULL; d++) {
		uintptr_t v = (uintptr_t)d->d_un.d_ptr;
		switch (d->d_tag) {
		case DT_SYMTAB:
			tab = (const ElfW(Sym) *)dyn_ptr(info, v);
			break;
		case DT_STRTAB: *strtab = (const char *)dyn_ptr(info, v); break;
		case DT_STRSZ: strsz = (size_t)d->d_un.d_val; break;
		case DT_GNU_HASH:
			gnu = (const Elf32_Word *)dyn_ptr(info, v);
			break;
		case DT_HASH:
			sysv = (const Elf32_Word *)dyn_ptr(info, v);
			break;
		}
	}
	if (!tab || !*strtab)
		return NULL;
	if (gnu) {
		/* nbuckets, symoffset, bloom words, shift; the bloom filter;
		** the buckets; the chains, each ending with its low bit set. */
		const ElfW(Addr) *bloom = (const ElfW(Addr) *)(gnu + 4);
		const Elf32_Word *buckets =
		    (const Elf32_Word *)(bloom + gnu[2]);
		const Elf32_Word *chains = buckets + gnu[0] - gnu[1];
		for (Elf32_Word b = 0; b < gnu[0]; b++) {
			Elf32_Word k = buckets[b];
			if (k == 0)
				continue;
			do {
				if (sym_better(info, &tab[k], strsz, ip, best))
					best = &tab[k];
			} while (!(chains[k++] & 1));
		}
	} else if (sysv) {
		for (Elf32_Word k = 0; k < sysv[1]; k++) /* nchain symbols */
			if (sym_better(info, &tab[k], strsz, ip, best))
				best = &tab[k];
	}
	return best;
}

/* What dlfind looks for; filled in by find_cb. */
struct lookup {
	uintptr_t ip;
	int (*fn)(void *arg, const struct dlfind_hit *hit);
	void *arg;
	int rc; /* fn's, or 0: in no object */
};

/* Any thread (dl_iterate_phdr callback, the loader's list locked: the
** object cannot go while its names are copied). If the object holds
** l->ip, call l->fn with the copies and stop. */
static int find_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct lookup *l = data;
	uintptr_t lo = UINTPTR_MAX;
	const ElfW(Sym) * sym;
	const char *strtab;
	struct dlfind_hit h = {"", 0, NULL, 0};
	int i, in = 0;
	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type != PT_LOAD)
			continue;
		if (a < lo)
			lo = a;
		if (l->ip >= a && l->ip - a < ph->p_memsz)
			in = 1;
	}
	if (!in)
		return 0;
	h.base = lo & ~((uintptr_t)sysconf(_SC_PAGESIZE) - 1);
	char *obj = loader_strdup(info->dlpi_name ? info->dlpi_name : "");
	char *name = NULL;
	if ((sym = sym_at(info, l->ip, &strtab))) {
		name = loader_strdup(strtab + sym->st_name);
		h.start = info->dlpi_addr + sym->st_value;
	}
	if (!obj || (sym && !name)) {
		l->rc = -ENOMEM;
	} else {
		h.object = obj;
		h.sym = name;
		l->rc = l->fn(l->arg, &h);
	}
	free(obj);
	free(name);
	return 1;
}

/* Any thread, not in a signal handler. See dlfind.h. */
int dlfind(uintptr_t ip, int (*fn)(void *arg, const struct dlfind_hit *hit),
	   void *arg)
{
	struct lookup l = {ip, fn, arg, 0};
	dl_iterate_phdr(find_cb, &l);
	return l.rc;
}
