#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# parse-write-bw.sh - on the host: parse-write-bw turns the average of a
# perftest report (MiB/s or Gbit/s) into Gbit/s, and refuses a report with
# no result row, with two rows, or with a malformed row. A report of a run
# whose clock calibration failed (perftest then prints 0 for every figure)
# is refused with exit status 3, which ib-write-bw-gbps reruns.
set -euo pipefail
parse=$(cd "$(dirname "$0")/.." && pwd)/parse-write-bw

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# A report laid out the way ib_write_bw lays one out; AVG_HEADER and ROWS vary.
report() {
	printf ' RDMA_Write BW Test\n Connection type : RC\n'
	printf -- '---------------------------------------\n'
	printf ' #bytes     #iterations    BW peak[%s]    BW average[%s]   MsgRate[Mpps]\n' "$1" "$1"
	shift
	printf '%s\n' "$@"
	printf -- '---------------------------------------\n'
}

expect_gbps() {
	local want=$1 got
	shift
	got=$("$parse" < <(report "$@")) || fail "parse-write-bw refused a valid report ($*)"
	[ "$got" = "$want" ] || fail "parse-write-bw printed $got, expected $want ($*)"
	echo "parsed: $got Gbit/s"
}

expect_refused() {
	local why=$1 err
	shift
	if err=$("$parse" < <(report "$@") 2>&1); then
		fail "parse-write-bw accepted a report with $why: $err"
	fi
	echo "refused ($why): $err"
}

# 125 MiB/s = 125 * 2^20 * 8 bit/s = 1.048576 Gbit/s.
expect_gbps 1.04858 MB/sec ' 65536      1000           130.00             125.00  		   0.002000'
expect_gbps 0.47 Gb/sec ' 65536      1000           0.50             0.47  		   0.000900'
expect_refused "no result row" MB/sec
expect_refused "two result rows" MB/sec ' 4096 1000 1.0 1.0 0.1' ' 8192 1000 2.0 2.0 0.1'
expect_refused "a malformed row" MB/sec ' 65536 1000 56.81 n/a 0.0009'
if err=$(echo "Couldn't connect to 10.0.3.15:18515" | "$parse" 2>&1); then
	fail "parse-write-bw accepted an error message: $err"
fi
echo "refused (no report): $err"

# The report of a run that perftest could not time, as rxe0's client printed
# it in CI (stop 30): its line on stderr, then the table, all zero.
set +e
err=$({ echo 'Correlation coefficient r^2: 0.891471 < 0.9'
	report MB/sec ' 65536      500              0.00               0.00   		   0.000000'
} | "$parse" 2>&1)
rc=$?
set -e
[ $rc -eq 3 ] || fail "parse-write-bw gave exit $rc, not 3, for a report whose clock calibration failed: $err"
grep -q 'could not calibrate its clock ("Correlation coefficient r^2: 0.891471 < 0.9")' <<<"$err" ||
	fail "parse-write-bw did not say the calibration failed: $err"
echo "refused with exit 3 (clock calibration failed): $err"
