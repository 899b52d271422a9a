# ljlog: the nginx site of tests/e2e/nginx.sh and bench/nginx.sh, sourced by
# both. nginx_site DIR NGXLUA: writes DIR/handler.lua and DIR/nginx.conf (2
# workers, the lua module and NDK from NGXLUA, listening on a free loopback
# port, set in $port) and makes DIR/logs and DIR/tmp writable by the
# workers (as root they run as nobody). The configuration has nothing of
# ljlog: only the module and the handler. A request /?work=N calls
# handle(N) once (not a tail call), which spends N loop turns in busy() and
# answers "pid PID SUM": the worker that served it.
nginx_site() {
	local dir=$1 ngxlua=$2
	local mods=$ngxlua/usr/lib/nginx/modules resty=$ngxlua/usr/share/lua/5.1
	chmod 755 "$dir"
	mkdir -m 1777 "$dir/logs" "$dir/tmp"
	cat >"$dir/handler.lua" <<'LUA'
local M = {}

local function busy(n)
	local s = 0
	for i = 1, n do
		s = s + #tostring(i * 7)
	end
	return s
end

local function handle(work)
	local s = busy(work)
	ngx.say("pid ", ngx.worker.pid(), " ", s)
end

M.handle = handle
return M
LUA
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	cat >"$dir/nginx.conf" <<CONF
load_module $mods/ndk_http_module.so;
load_module $mods/ngx_http_lua_module.so;
worker_processes 2;
pid $dir/nginx.pid;
error_log $dir/error.log info;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $dir/tmp/body;
	proxy_temp_path $dir/tmp/proxy;
	fastcgi_temp_path $dir/tmp/fastcgi;
	uwsgi_temp_path $dir/tmp/uwsgi;
	scgi_temp_path $dir/tmp/scgi;
	lua_package_path "$dir/?.lua;$resty/?.lua;;";
	init_by_lua_block { handler = require "handler" }
	server {
		listen 127.0.0.1:$port;
		location / {
			content_by_lua_block {
				handler.handle(tonumber(ngx.var.arg_work) or 0)
				ngx.exit(200)
			}
		}
	}
}
CONF
}
