/*
** ljlog e2e: a host that links LuaJIT only, as nginx's lua module does:
** it knows nothing of ljlog (preload.sh profiles it with LD_PRELOAD).
** plainhost [--malloc] [--vms N] SCRIPT [ARGS...]: N VMs one after the
** other (luaL_newstate, or lua_newstate with the system allocator), each
** with the standard libraries and a C function host.twice(x), runs SCRIPT
** with (VM index, ARGS...) and closes it.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

/* Any thread. The system allocator, for lua_newstate. */
static void *sys_alloc(void *ud, void *p, size_t osize, size_t nsize)
{
	(void)ud;
	(void)osize;
	if (nsize == 0) {
		free(p);
		return NULL;
	}
	return realloc(p, nsize);
}

/* VM thread. host.twice(x) -> 2x */
static int twice(lua_State *L)
{
	lua_pushnumber(L, 2 * luaL_checknumber(L, 1));
	return 1;
}

int main(int argc, char **argv)
{
	int use_malloc = 0, nvms = 1, i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--malloc") == 0)
			use_malloc = 1;
		else if (strcmp(argv[i], "--vms") == 0 && i + 1 < argc)
			nvms = atoi(argv[++i]);
		else
			break;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: plainhost [--malloc] [--vms N] SCRIPT "
				"[ARGS...]\n");
		return 2;
	}
	const char *script = argv[i++];
	for (int v = 1; v <= nvms; v++) {
		lua_State *L = use_malloc ? lua_newstate(sys_alloc, NULL)
					  : luaL_newstate();
		if (!L) {
			fprintf(stderr,
				"plainhost: cannot create a Lua state\n");
			return 1;
		}
		luaL_openlibs(L);
		static const luaL_Reg fns[] = {{"twice", twice}, {NULL, NULL}};
		luaL_register(L, "host", fns);
		lua_pop(L, 1);
		if (luaL_loadfile(L, script) != 0) {
			fprintf(stderr, "plainhost: %s\n", lua_tostring(L, -1));
			return 1;
		}
		lua_pushinteger(L, v);
		for (int a = i; a < argc; a++)
			lua_pushstring(L, argv[a]);
		if (lua_pcall(L, 1 + argc - i, 0, 0) != 0) {
			fprintf(stderr, "plainhost: %s\n", lua_tostring(L, -1));
			return 1;
		}
		lua_close(L);
	}
	return 0;
}
