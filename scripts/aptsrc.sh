# Sourced by scripts/setup.sh and scripts/setup-tools.sh: Debian packages
# installed when missing, binary packages unpacked privately, and source
# packages fetched with a private apt configuration (deb-src lines and lists
# under DEPS/apt): the system's apt sources are left alone.
# The caller defines say() and die().

# apt_root PKGS: sets $sudo to "" (root) or "sudo"; dies naming PKGS when
# neither works.
apt_root() {
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null 2>&1 || die "not root and no sudo: install as root: $*"
		sudo="sudo"
	fi
}

# apt_install_missing PKGS: installs those of PKGS that dpkg does not list
# as installed (after apt_root).
apt_install_missing() {
	am_missing=""
	for am_p in "$@"; do
		dpkg-query -W -f='${Status}' "$am_p" 2>/dev/null | grep -q "ok installed" ||
			am_missing="$am_missing $am_p"
	done
	[ -n "$am_missing" ] || return 0
	say "installing:$am_missing"
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
	# shellcheck disable=SC2086
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $am_missing >/dev/null
}

# apt_unpack DEST PKGS: downloads the binary packages PKGS (apt-get
# download, no install) and unpacks them into DEST (dpkg -x).
apt_unpack() {
	au_dest=$1
	shift
	au_dl=$(mktemp -d)
	chmod 755 "$au_dl" # apt's sandbox user writes into it
	au_get() { (cd "$au_dl" && apt-get download -q "$@" >/dev/null 2>&1); }
	au_get "$@" || { $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null && au_get "$@"; } ||
		{ rm -rf "$au_dl"; die "apt-get download $* failed"; }
	for au_d in "$au_dl"/*.deb; do
		dpkg -x "$au_d" "$au_dest" || { rm -rf "$au_dl"; die "dpkg -x $au_d failed"; }
	done
	rm -rf "$au_dl"
}

# apt_source DEPS DL PKG VER DEST: downloads PKG=VER into DEPS/DL and
# unpacks it into DEST (replaced); dies with what failed.
apt_source() {
	as_deps=$1 as_dl=$1/$2 as_pkg=$3 as_ver=$4 as_dest=$5
	as_apt="$as_deps/apt"
	mkdir -p "$as_apt/lists/partial" "$as_apt/archives/partial" "$as_dl"
	as_suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
	cat >"$as_apt/sources.list" <<EOT
deb-src http://deb.debian.org/debian $as_suite main
deb-src http://deb.debian.org/debian $as_suite-updates main
deb-src http://deb.debian.org/debian-security $as_suite-security main
EOT
	as_opts="-o Dir::Etc::SourceList=$as_apt/sources.list -o Dir::Etc::SourceParts=/dev/null
-o Dir::State::Lists=$as_apt/lists -o Dir::Cache::Archives=$as_apt/archives
-o APT::Sandbox::User=root"
	# shellcheck disable=SC2086
	apt-get $as_opts update -q >/dev/null || die "apt-get update for deb-src (in $as_apt) failed"
	rm -rf "$as_dl"/* "$as_dest"
	# shellcheck disable=SC2086
	(cd "$as_dl" && apt-get $as_opts source -q --download-only "$as_pkg=$as_ver" >/dev/null) ||
		die "apt-get source $as_pkg=$as_ver (into $as_dl) failed"
	(cd "$as_dl" && dpkg-source -q -x ./"${as_pkg}"_*.dsc "$as_dest" >/dev/null 2>&1) ||
		die "dpkg-source could not unpack $as_pkg $as_ver from $as_dl into $as_dest"
	[ -f "$as_dest/src/lj_obj.h" ] || die "no src/lj_obj.h in $as_dest"
}
