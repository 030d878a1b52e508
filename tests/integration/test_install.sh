#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test_install.sh SOURCE_ROOT SANITIZE - pcm installed to a temporary prefix
# works on its own: it builds a copy of the source tree, installs it (as an
# unprivileged user when run as root, so that nothing can be written outside
# the prefix, and every file meson installed is listed and must be under it:
# the systemd unit in PREFIX/lib/systemd/system, the default config path
# PREFIX/etc/pcm/pcmd.yaml, the unit's sandbox binding the prefix), deletes
# the copy and its build, and then, from the prefix alone, checks what was
# installed, builds against libpcm with pkg-config, builds an out-of-tree
# package with the installed pcmc and runs it in the installed pcm-sim, and
# runs the installed pcm-bench validate-arith (which needs the installed
# pcmc and policy sources) and sim-scale (the installed pcm-sim and
# scenario).
#
# Reproduce by hand: tests/integration/test_install.sh "$PWD" none
set -euo pipefail

src_root=$1
sanitize=${2:-none}

if [ "$sanitize" != none ]; then
	echo "skip: the install test builds its own copy; it runs in the build without sanitizers"
	exit 77
fi
for tool in meson ninja cc pkg-config objcopy; do
	if ! command -v "$tool" >/dev/null; then
		echo "skip: $tool is not installed"
		exit 77
	fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/pcm-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
copy=$work/src
prefix=$work/prefix

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

echo "== building a copy of $src_root and installing it to $prefix"
mkdir -p "$copy"
tar -C "$src_root" --exclude='./build*' --exclude=./.git --exclude='./out' -cf - . |
	tar -C "$copy" -xf -
# As root, build and install as nobody: a write outside the prefix fails the install.
as_user=()
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chown -R 65534:65534 "$work"
	chmod 755 "$work"
	as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$work")
fi
# Built without optimization: the build is most of this test's time (300 s in
# meson, on a loaded machine), and what it checks is the install, not speed.
"${as_user[@]}" meson setup "$work/build" "$copy" --prefix "$prefix" -Dtests=disabled \
	-Doptimization=0 >"$work/setup.log" || { cat "$work/setup.log"; fail "meson setup"; }
"${as_user[@]}" ninja -C "$work/build" >"$work/build.log" || { tail -50 "$work/build.log"; fail "ninja"; }
"${as_user[@]}" meson install -C "$work/build" >"$work/install.log" ||
	{ cat "$work/install.log"; fail "install (as uid $("${as_user[@]}" id -u))"; }
man_built=no
[ -e "$work/build/docs/pcmc.1" ] && man_built=yes

echo "== every file the install wrote is under $prefix"
installed=$work/build/meson-logs/install-log.txt
[ -s "$installed" ] || fail "no install log"
n=0
while IFS= read -r f; do
	case "$f" in
	'#'*) continue ;;
	"$prefix" | "$prefix"/*) n=$((n + 1)) ;; # files, and the directories made for them
	*) fail "installed outside the prefix: $f" ;;
	esac
done <"$installed"
echo "$n files and directories, all under the prefix (installed as uid $("${as_user[@]}" id -u)):"
sed "s|^$prefix/||" "$installed" | grep -v '^#' | sort | sed 's/^/  /'
unit=$prefix/lib/systemd/system/pcmd.service
[ -f "$unit" ] || fail "no $unit"
grep -q "^ExecStart=$prefix/sbin/pcmd --config $prefix/etc/pcm/pcmd.yaml$" "$unit" ||
	fail "the unit runs another pcmd or config: $(grep ^ExecStart "$unit")"
# The prefix is under /tmp: the unit's PrivateTmp= would hide it, so it is bound in.
case "$prefix" in
/tmp/* | /var/tmp/*) grep -q "^BindReadOnlyPaths=$prefix$" "$unit" || fail "the unit does not see $prefix" ;;
esac
if command -v systemd-analyze >/dev/null; then
	systemd-analyze security --offline=true "$unit" 2>&1 | tail -n 1 | tee "$work/security.out"
	awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+$/) s = $i } END { exit !(s <= 2.0) }' \
		"$work/security.out" || fail "the installed unit's exposure is above 2.0"
fi
"$prefix/sbin/pcmd" --help | grep -q "Without -c, $prefix/etc/pcm/pcmd.yaml is read" ||
	fail "pcmd's default config is not the prefix's: $("$prefix/sbin/pcmd" --help)"
[ -d "$prefix/etc/pcm/policies" ] || fail "no $prefix/etc/pcm/policies for packages"

echo "== removing the copy and its build: only the prefix is left"
rm -rf "$copy" "$work/build"

echo "== what was installed"
for f in bin/pcmc bin/pcm-sim bin/pcm-bench include/pcm/pcmh.h include/pcm/pcm.h \
	include/pcm/package.h include/pcm/pcm_fx.h include/pcm/pcm_algo.h include/pcm/spec.h \
	include/pcm/shell.h include/pcm/transport.h share/pcm/policies/swift.yaml share/pcm/policies/swift.c \
	share/pcm/fabric/default.yaml share/pcm/scenarios/incast-8.yaml \
	share/doc/pcm/sdk-compat.md; do
	[ -e "$prefix/$f" ] || fail "$f is not installed"
done
libpcm_so=$(find "$prefix" -name 'libpcm.so.0*' -type f | head -n1)
libpcm_a=$(find "$prefix" -name libpcm.a | head -n1)
pc=$(find "$prefix" -name pcm.pc | head -n1)
[ -n "$libpcm_so" ] || fail "no shared libpcm"
[ -n "$libpcm_a" ] || fail "no static libpcm"
[ -n "$pc" ] || fail "no pcm.pc"
if command -v pandoc >/dev/null; then
	[ "$man_built" = yes ] || fail "pandoc is installed but no man pages were built"
	for m in man1/pcmc.1 man1/pcm-sim.1 man1/pcm-bench.1 man1/pcmctl.1 \
		man3/pcm_transport.3 man5/pcmd.conf.5 man7/pcm-handler.7 man8/pcmd.8; do
		[ -e "$prefix/share/man/$m" ] || fail "man page $m is not installed"
	done
fi
# Debug information may name the build's paths; nothing the programs load may.
while IFS= read -r -d '' f; do
	target=$f
	magic=$(head -c 7 "$f" | od -An -c | tr -d ' ')
	if [ "${magic:0:6}" = 177ELF ] || [ "$magic" = "!<arch>" ]; then
		objcopy --strip-debug "$f" "$work/stripped" || fail "objcopy $f"
		target=$work/stripped
	fi
	if grep -q --binary-files=text -e "$copy" -e "$work/build" "$target"; then
		fail "$f names the deleted source or build tree"
	fi
done < <(find "$prefix" -type f -print0)

echo "== a program built against the installed libpcm through pkg-config"
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc")
cat >"$work/use_libpcm.c" <<'PROG'
#include <stdio.h>
#include <pcm/spec.h>

int main(int argc, char **argv)
{
	struct pcm_fabric *fabric;
	struct pcm_spec *spec;
	struct pcm_diag diag;

	if (argc != 3 || pcm_fabric_load(argv[1], &fabric, &diag) ||
	    pcm_spec_load(argv[2], fabric, &spec, &diag)) {
		fprintf(stderr, "%s\n", diag.msg);
		return 1;
	}
	printf("%s: %u signals\n", spec->name, spec->n_signals);
	pcm_spec_free(spec);
	pcm_fabric_free(fabric);
	return 0;
}
PROG
# shellcheck disable=SC2046
cc -o "$work/use_libpcm" "$work/use_libpcm.c" $(pkg-config --cflags --libs pcm) ||
	fail "cannot build against pcm.pc"
LD_LIBRARY_PATH=$(dirname "$libpcm_so") "$work/use_libpcm" \
	"$prefix/share/pcm/fabric/default.yaml" "$prefix/share/pcm/policies/swift.yaml" |
	grep -q "^swift: " || fail "the program linked with the shared libpcm did not run"
[ "$(pkg-config --variable=pcmc pcm)" = "$prefix/bin/pcmc" ] || fail "pcm.pc names no pcmc"

echo "== examples/minimal.c built against the installed libpcmtransport through pkg-config"
[ -e "$(dirname "$pc")/pcmtransport.pc" ] || fail "no pcmtransport.pc beside pcm.pc"
libtp_so=$(find "$prefix" -name 'libpcmtransport.so.0*' -type f | head -n1)
[ -n "$libtp_so" ] || fail "no shared libpcmtransport"
# shellcheck disable=SC2046
cc -o "$work/minimal" "$src_root/examples/minimal.c" $(pkg-config --cflags --libs pcmtransport) ||
	fail "cannot build examples/minimal.c against pcmtransport.pc"
LD_LIBRARY_PATH=$(dirname "$libtp_so") "$work/minimal" | grep -q '^minimal: received' ||
	fail "examples/minimal.c linked with the installed libpcmtransport did not run"

echo "== an out-of-tree package built by the installed pcmc, run by the installed pcm-sim"
pkg=$work/package
mkdir -p "$pkg"
cp -r "$src_root/tests/data/sdk_tcp/." "$pkg/"
# A clean environment: no PCM_INCLUDE_DIR, no pkg-config path; pcmc finds its
# headers relative to itself.
env -i PATH=/usr/bin:/bin HOME="$work" "$prefix/bin/pcmc" build "$pkg/reno_like.yaml" \
	"$pkg/reno_like.c" "$pkg/tcp_shared.c" -I "$pkg/include" --target uet \
	-o "$pkg/reno_like.so" || fail "the installed pcmc cannot build the package"
env -i PATH=/usr/bin:/bin "$prefix/bin/pcm-sim" "$prefix/share/pcm/scenarios/incast-8.yaml" \
	--policy "$pkg/reno_like.so" >"$work/sim.out" || { cat "$work/sim.out"; fail "pcm-sim"; }
grep -q "8 of 8 flows completed" "$work/sim.out" || { cat "$work/sim.out"; fail "flows left"; }
grep -q "(errors 0)" "$work/sim.out" || { cat "$work/sim.out"; fail "handler errors"; }
tail -n 4 "$work/sim.out"

echo "== the installed pcm-bench validate-arith finds the installed pcmc and sources"
env -i PATH=/usr/bin:/bin "$prefix/bin/pcm-bench" validate-arith --policy swift --json \
	>"$work/arith.out" 2>"$work/arith.err" || { cat "$work/arith.err"; fail "validate-arith"; }
[ "$(grep -c '"completed":8' "$work/arith.out")" = 4 ] || { cat "$work/arith.out"; fail "arith runs"; }

echo "== the installed pcm-bench sim-scale finds the installed pcm-sim and scenario"
(cd / && env -i PATH=/usr/bin:/bin "$prefix/bin/pcm-bench" sim-scale --k 4 --rounds 1 \
	--set traffic.bytes=64KB --json) >"$work/scale.out" 2>"$work/scale.err" ||
	{ cat "$work/scale.err"; fail "sim-scale"; }
grep -q '"summary":true,"scenario":"[^"]*/share/pcm/scenarios/fattree-permutation.yaml","k":4,"hosts":16' \
	"$work/scale.out" || { cat "$work/scale.out"; fail "sim-scale's summary"; }

echo "install test passed"
