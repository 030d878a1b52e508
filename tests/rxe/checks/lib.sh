# SPDX-License-Identifier: MIT
#
# lib.sh - helpers for the rxe checks and tools that run inside the VM
# (sourced, bash). vm-run's guest exports PCM_RXE_JOB, PCM_RXE_IP0 (eth0,
# rxe0) and PCM_RXE_IP1 (eth1, rxe1).

LISTEN_WAIT_TENTHS=200
# A pair that hangs (a lost UC message, say) fails with its logs, well
# before vm-run's own timeout would kill the VM without them.
PAIR_TIMEOUT_S=120

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

require_vm() {
	if [ -z "${PCM_RXE_JOB:-}" ]; then
		echo "SKIP: $(basename "$0") runs inside the rxe VM only (tests/rxe/vm-run)" >&2
		exit 77
	fi
}

# ip_of DEV: the IPv4 address (hence GID index 1) of rxe0 or rxe1.
ip_of() {
	case $1 in
	rxe0) echo "$PCM_RXE_IP0" ;;
	rxe1) echo "$PCM_RXE_IP1" ;;
	*) fail "no address known for RDMA device $1" ;;
	esac
}

# hw_counter DEV NAME: one of rdma_rxe's port counters.
hw_counter() {
	cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2"
}

# log_dir NAME: a fresh directory for a check's logs on the job share,
# where vm-run --keep leaves it for the host to read.
log_dir() {
	local dir=$PCM_RXE_JOB/logs/$1
	mkdir -p "$dir"
	echo "$dir"
}

# is_listening PORT: a TCP socket (IPv4 or IPv6) listens on PORT. Read from
# /proc/net with builtins: under TCG, ss alone takes a good part of a second.
is_listening() {
	local want f _sl local_addr _rem state _rest
	printf -v want '%04X' "$1"
	for f in /proc/net/tcp /proc/net/tcp6; do
		[ -r $f ] || continue
		while read -r _sl local_addr _rem state _rest; do
			[[ $state == 0A && ${local_addr##*:} == "$want" ]] && return 0
		done <$f
	done
	return 1
}

# wait_listening PORT PID: until a TCP socket listens on PORT. Fails when
# PID (the server that should open it) exits first, or after 20 s.
wait_listening() {
	local tries=0
	until is_listening "$1"; do
		kill -0 "$2" 2>/dev/null || return 1
		tries=$((tries + 1))
		[ $tries -lt $LISTEN_WAIT_TENTHS ] || return 1
		sleep 0.1
	done
}

# run_pair LOGS PORT SERVER_CMD... -- CLIENT_CMD...: start the server, wait
# until it listens on PORT, run the client, and wait for both, each for at
# most PAIR_TIMEOUT_S. Their output goes to LOGS.server and LOGS.client, and
# is printed when either fails. PORT must lie outside the kernel's ephemeral
# range. Return: 0 when both exit 0.
run_pair() {
	local logs=$1 port=$2 server=() spid rc=0 src=0 eph_lo eph_hi
	shift 2
	read -r eph_lo eph_hi </proc/sys/net/ipv4/ip_local_port_range
	[ "$port" -lt "$eph_lo" ] || [ "$port" -gt "$eph_hi" ] ||
		fail "run_pair: port $port is in the ephemeral range $eph_lo-$eph_hi, where an earlier connection's source port can hold it"
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		server+=("$1")
		shift
	done
	[ $# -gt 1 ] || fail "run_pair: no client command after --"
	shift
	timeout $PAIR_TIMEOUT_S "${server[@]}" >"$logs.server" 2>&1 &
	spid=$!
	if wait_listening "$port" "$spid"; then
		timeout $PAIR_TIMEOUT_S "$@" >"$logs.client" 2>&1 || rc=$?
	else
		echo "run_pair: ${server[0]} never listened on port $port" >"$logs.client"
		rc=1
		kill "$spid" 2>/dev/null || true
	fi
	wait "$spid" || src=$?
	if [ $rc -ne 0 ] || [ $src -ne 0 ]; then
		echo "--- server (exit $src): ${server[*]}" >&2
		cat "$logs.server" >&2
		echo "--- client (exit $rc): $*" >&2
		cat "$logs.client" >&2
		return 1
	fi
}

# fi_pingpong_pair NAME SIZE ITERS EXTRA...: one fi_pingpong pair on rxe0's
# address, server (-B) and client (-P), each run as
#   fi_pingpong "${fi_opts[@]}" -B|-P PORT -S SIZE -I ITERS EXTRA...
# with the caller's fi_opts (provider and endpoint type), on the next port after
# the caller's $port (which it advances), the logs in the caller's $logs and the
# client's output in $logs/NAME.client. A pair that fails is run once more on a
# fresh port, and the retry is counted in the caller's $retries: under TCG a
# client has been seen to print its full result row and then hang in the verbs
# provider's rdma_cm teardown until the timeout (CI, 1 KiB, exit 124). A second
# failure fails. Return: 0 when one of the two runs passed.
fi_pingpong_pair() {
	local name=$1 size=$2 iters=$3 attempt
	shift 3
	for attempt in 1 2; do
		port=$((port + 1))
		run_pair "$logs/$name" $port \
			fi_pingpong "${fi_opts[@]}" -B $port -S "$size" -I "$iters" "$@" -- \
			fi_pingpong "${fi_opts[@]}" -P $port -S "$size" -I "$iters" "$@" "$PCM_RXE_IP0" &&
			return 0
		[ $attempt -eq 2 ] || { retries=$((retries + 1)); echo "retrying $name once" >&2; }
	done
	return 1
}

# usec_per_xfer LOG: the usec/xfer column of fi_pingpong's result row.
usec_per_xfer() {
	awk '$1 == "bytes" { getline; print $7; exit }' "$1"
}

# rtt_us LOG: fi_pingpong's round trip in LOG, 2 x its usec/xfer (which is
# half a round trip). Return: 1, printing nothing, when LOG has no result row.
rtt_us() {
	local half
	half=$(usec_per_xfer "$1")
	[ -n "$half" ] || return 1
	awk -v h="$half" 'BEGIN { print 2 * h }'
}

# json_list NUMBERS...: a JSON array of them, [1.5,2,3].
json_list() {
	local IFS=,
	echo "[$*]"
}

# median NUMBERS...: the middle one (the lower middle of an even count).
median() {
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# best NUMBERS...: the smallest.
best() {
	printf '%s\n' "$@" | sort -g | head -n 1
}
