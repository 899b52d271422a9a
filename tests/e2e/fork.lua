-- ljlog e2e: forked children (fork.sh). Calls f 100 times, forks (FFI); the
-- child calls g NCHILD times (arg 2), spins SPIN s of CPU (arg 3, for samples)
-- and exits through os.exit; arg 4 "exec": it execs /bin/true at once; arg 4
-- "until=PATH": it prints "child CPID" and spins until PATH exists. The parent
-- waits, calls f NPARENT times (arg 1), prints "parent PID child CPID status S".
local ffi = require "ffi"
ffi.cdef([[
int fork(void);
int waitpid(int pid, int *status, int options);
int getpid(void);
int execl(const char *path, const char *arg, ...);
void _exit(int status);
]])
local nparent, nchild = tonumber(arg[1]), tonumber(arg[2])
local spin, mode = tonumber(arg[3]) or 0, arg[4]
local function f(x)
	local y = x + 1
	return y
end
local function g(x)
	local y = x * 2
	return y
end
local function busy(seconds)
	local t0, s = os.clock(), 0
	while os.clock() - t0 < seconds do
		for i = 1, 1000 do
			s = s + i % 3
		end
	end
	return s
end
for i = 1, 100 do
	f(i)
end
io.stdout:flush()
local pid = ffi.C.fork()
if pid == 0 then
	if mode == "exec" then
		ffi.C.execl("/bin/true", "true", nil)
		ffi.C._exit(127)
	end
	for i = 1, nchild do
		g(i)
	end
	local stop = mode and mode:match("^until=(.*)")
	if stop then
		print("child " .. ffi.C.getpid())
		io.stdout:flush()
		while not io.open(stop) do
			busy(0.01)
		end
		os.exit(0)
	end
	busy(spin)
	print("child " .. ffi.C.getpid())
	io.stdout:flush()
	os.exit(0)
end
assert(pid > 0, "fork failed")
local st = ffi.new("int[1]")
ffi.C.waitpid(pid, st, 0)
for i = 1, nparent do
	f(i)
end
print("parent " .. ffi.C.getpid() .. " child " .. pid .. " status " .. st[0])
