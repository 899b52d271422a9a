/*
** ljlog mapper: the one owner of a VM's pointer -> ID map, its names and
** the MAPPING records a mapping pass writes.
** Shared by the flush (VM thread) and the sampler's drainer (helper thread
** or VM thread): every use but init/free is under the mapper's own lock.
*/
#ifndef LJLOG_MAPS_MAPPER_H
#define LJLOG_MAPS_MAPPER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "blocks/writer.h"
#include "maps/ljwin.h"
#include "maps/names.h"
#include "util/hmap.h"

/* Keys a mapper maps (the buffer's and the signal buffer's raw values). */
enum mapper_key {
	MAPPER_NONE = 0,
	MAPPER_PROTO = 1,     /* GCproto* */
	MAPPER_CFUNC = 2,     /* lua_CFunction */
	MAPPER_FFUNC = 3,     /* ffid | MAPPER_FF_ASM */
	MAPPER_COROUTINE = 4, /* lua_State* */
	MAPPER_TRACE = 5,     /* GCtrace* */
};

/* Fast function keys: ffid, | MAPPER_FF_ASM for assembler ones (no EXIT). */
#define MAPPER_FF_ASM 0x100u

/* Size of the per-pass ID cache in front of the map. */
#define MAPPER_CACHE 256

struct mapper {
	pthread_mutex_t lock; /* everything below; always a real lock */
	global_State *g;      /* the VM whose objects are mapped */
	uint64_t vm_id;	      /* its ID: MAPPING blocks name it */
	struct hmap map;      /* key -> ID of live objects */
	struct hmap strs;     /* XXH3 of a STRING's text -> its ID */
	struct names names;   /* C and fast function names */
	int line_exits;	      /* traces have an exit per line where they
			      ** allocate (exact alloc): a snapshot's
			      ** allocation line is its frame's */
	/* -- The current pass ------------------------------------------------- */
	struct wbuf *out;  /* MAPPING block being built, NULL outside a pass */
	size_t moff;	   /* its offset in out */
	size_t mstart;	   /* where its records start */
	int bad;	   /* out of memory during the pass */
	uint64_t pass_id0; /* IDs made in the pass are >= this */
	uintptr_t ckey[MAPPER_CACHE]; /* ID cache: valid during one pass */
	uint64_t cid[MAPPER_CACHE];
	/* -- Names found after the record (NAME, format 14) ------------------- */
	struct hmap unnamed;  /* key -> ID of a PROTO or CFUNC written
			       ** without its name */
	struct hmap pending;  /* GCproto* -> its name (a malloc'd char *),
			       ** found before it was mapped */
	struct hmap walked;   /* key -> ID named from a table path, which
			      ** its chunk's bytecode may name again */
	struct wbuf late;     /* NAME records for the next pass */
	unsigned unnamed_new; /* unnamed since the last look */
	void (*want)(void *); /* told at a pass's end while there are
			       ** (lock held; quick, takes no lock) */
	void *want_ud;
#ifndef NDEBUG
	/* Debug builds: the thread holding lock (pthread_self, a TLS read:
	** gettid is a system call, several per flush). */
	pthread_t owner;
	int held;
#endif
};

/* Any thread. A fresh process-wide ID (>= 1), never reused. */
uint64_t mapper_new_id(void);

/* VM thread only (attach). An empty mapper for the VM g with ID vm_id;
** 0 or -ENOMEM. */
int mapper_init(struct mapper *m, global_State *g, uint64_t vm_id);

/* Child side of fork(), single-threaded. Forget every ID (each is made and
** recorded again, in the child's own log); names are kept. The lock is made
** anew: a thread of the parent may have held it. */
void mapper_fork_child(struct mapper *m);

/* VM thread only (detach), once no other thread can use m. */
void mapper_free(struct mapper *m);

/* Any thread. Take / release m's lock. */
void mapper_lock(struct mapper *m);
void mapper_unlock(struct mapper *m);

/* Any thread. Abort in debug builds unless the caller holds m's lock. */
void mapper_assert_held(const struct mapper *m);

/* Caller holds m's lock. Start a pass: new records go into a MAPPING block
** started in out; the ID cache is reset (objects may have been freed since
** the last pass). */
void mapper_begin(struct mapper *m, struct wbuf *out);

/* Caller holds m's lock, in a pass. The ID of key (a mapper_key kind),
** making it and its MAPPING record on first use; traceno is the trace's
** number as seen at the event (MAPPER_TRACE only: jit.flush() zeroes it
** in traces that live on). 0 when out of memory (the pass is then bad).
** The object must be alive: callers map before the GC can sweep it. */
uint64_t mapper_ref(struct mapper *m, unsigned kind, uintptr_t key,
		    unsigned traceno);

/* Caller holds m's lock, in a pass. The ID of the STRING with text s (len
** bytes, at most FORMAT_STRING_MAX), making it and its record on first
** use (texts are told apart by a 64-bit hash). 0 when out of memory. */
uint64_t mapper_string(struct mapper *m, const char *s, size_t len);

/* Caller holds m's lock. End the pass: the MAPPING block is closed, or
** removed when it holds no record. 1 when a block was left in out, 0 when
** none, -ENOMEM when the pass ran out of memory (out is then cut back to
** where the pass began, and the IDs it made are forgotten). */
int mapper_end(struct mapper *m);

/* Any thread but the mapper's lock holder. An object at key was freed: a
** new object at that address gets a new ID. */
void mapper_forget(struct mapper *m, uintptr_t key);

/* Caller holds m's lock. The function at key (GCproto* or C function) is
** called name, sure when the bytecode that made it says so (else a table
** path): a NAME record for its ID if it was written without one, or if a
** table path named it and this is sure (in the next pass); else, when
** sure, remembered for when it is mapped. An empty name is no name. */
void mapper_name(struct mapper *m, uintptr_t key, const char *name, int sure);

/* VM thread only (allocator), the GC sweeping pt, which is about to be
** freed; takes m's lock. Its children are named from its bytecode while
** it is there (their memory is whole: the sweep reaches them after their
** parent), then pt is forgotten. */
void mapper_proto_freed(struct mapper *m, GCproto *pt);

/* VM thread only, the VM stopped between two instructions (a hook); takes
** m's lock. Look through the VM for the names of the functions written
** without one (namewalk.h). 1 when some were looked for. */
int mapper_look(struct mapper *m, lua_State *L);

/* VM thread only. Move into m's names those of fresh it lacks (fresh is
** left to names_free). */
void mapper_names_merge(struct mapper *m, struct names *fresh);

/* VM thread only. Name C function f, unless named (an FFI call's target,
** after its declaration). */
void mapper_names_add_c(struct mapper *m, uintptr_t f, const char *name);

#endif
