/*
** ljlog e2e host: the module's shared object is unloaded by lua_close's
** finalizers before ljlog's own close runs, while its hooks and allocator
** are still installed. ljlog must keep its code loaded and close the log.
** Usage: unload MODULE.so MODULE_DIR LOG
*/
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"

int main(int argc, char **argv)
{
	char opts[4096], code[4096];
	if (argc != 4) {
		fprintf(stderr, "usage: unload MODULE.so MODULE_DIR LOG\n");
		return 2;
	}
	/* Our own handle on the module: attach through it. */
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "unload: dlopen: %s\n", dlerror());
		return 1;
	}
	int (*attach)(lua_State *, const char *) =
		(int (*)(lua_State *, const char *))dlsym(h, "ljlog_attach");
	if (!attach) {
		fprintf(stderr, "unload: no ljlog_attach\n");
		return 1;
	}
	lua_State *L = luaL_newstate();
	luaL_openlibs(L);
	snprintf(opts, sizeof opts, "log:file=%s,calls,alloc,gc", argv[3]);
	if (attach(L, opts) != 0) {
		fprintf(stderr, "unload: attach failed\n");
		return 1;
	}
	/* Lua loads the module too: package's handle is newer than ljlog's
	** close-on-lua_close finalizer, so lua_close runs it first. */
	snprintf(code, sizeof code,
		 "package.cpath = '%s/?.so;' .. package.cpath\n"
		 "local m = require 'ljlog'\n"
		 "assert(m.running())\n"
		 "local t = {}\n"
		 "for i = 1, 10000 do t[i % 100 + 1] = {i} end\n",
		 argv[2]);
	if (luaL_dostring(L, code) != 0) {
		fprintf(stderr, "unload: %s\n", lua_tostring(L, -1));
		return 1;
	}
	dlclose(h); /* only package's handle keeps the module loaded now */
	lua_close(L);
	printf("closed\n");
	return 0;
}
