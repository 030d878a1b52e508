# SPDX-License-Identifier: MIT
"""
mpi4py_check.py - collectives and point-to-point from Python (mpi4py, under
Debian's /usr/bin/python3), each checked against the value it must have:
pickled objects (allreduce, bcast, alltoall, allgather, a ring of sendrecv)
and buffers (Allreduce of doubles, Bcast of 1 MiB, Alltoall of ints, tagged
Isend/Irecv received out of tag order, 2 MiB Sendrecv around the ring).
Rank 0 prints one JSON line: ranks, checks, errors (0 when all held).

Run: mpirun -np N /usr/bin/python3 mpi4py_check.py
"""
import array
import json
import sys

from mpi4py import MPI


def pattern(seed, n):
    """n bytes that depend on seed (a 32-bit LCG, as bytes)."""
    out = bytearray(n)
    x = seed & 0xFFFFFFFF
    for i in range(0, n, 4):
        x = (1664525 * x + 1013904223) & 0xFFFFFFFF
        out[i:i + 4] = x.to_bytes(4, "little")[:n - i]
    return out


def main():
    comm = MPI.COMM_WORLD
    me, n = comm.Get_rank(), comm.Get_size()
    nxt, prv = (me + 1) % n, (me - 1) % n
    failed = []
    checks = 0

    def check(ok, what):
        nonlocal checks
        checks += 1
        if not ok:
            failed.append(what)

    # pickled objects
    check(comm.allreduce(me + 1, op=MPI.SUM) == n * (n + 1) // 2, "allreduce(sum)")
    check(comm.allreduce(me, op=MPI.MAX) == n - 1, "allreduce(max)")
    obj = comm.bcast({"root": 0, "items": list(range(1000))} if me == 0 else None, root=0)
    check(obj == {"root": 0, "items": list(range(1000))}, "bcast(object)")
    check(comm.alltoall([(me, d) for d in range(n)]) == [(s, me) for s in range(n)], "alltoall")
    check(comm.allgather(me * me) == [r * r for r in range(n)], "allgather")
    check(comm.sendrecv(("hello", me), dest=nxt, source=prv) == ("hello", prv), "sendrecv(obj)")

    # buffers
    doubles = array.array("d", [me + i * 0.5 for i in range(100000)])
    total = array.array("d", bytes(8 * 100000))
    comm.Allreduce(doubles, total, op=MPI.SUM)
    check(all(total[i] == n * (n - 1) / 2 + n * i * 0.5 for i in range(0, 100000, 997)),
          "Allreduce(doubles)")
    blob = pattern(12345, 1 << 20) if me == 0 else bytearray(1 << 20)
    comm.Bcast(blob, root=0)
    check(blob == pattern(12345, 1 << 20), "Bcast(1 MiB)")
    ints = array.array("i", [me * 1000 + d for d in range(n) for _ in range(256)])
    got = array.array("i", bytes(4 * 256 * n))
    comm.Alltoall(ints, got)
    check(all(got[s * 256 + k] == s * 1000 + me for s in range(n) for k in (0, 255)),
          "Alltoall(ints)")

    # tagged window, matched out of order
    tags = list(range(16))
    reqs, bufs = [], {}
    for t in reversed(tags):
        bufs[t] = bytearray(20000 + t)
        reqs.append(comm.Irecv(bufs[t], source=prv, tag=t))
    comm.Barrier()
    for t in tags:
        reqs.append(comm.Isend(pattern(me * 100 + t, 20000 + t), dest=nxt, tag=t))
    MPI.Request.Waitall(reqs)
    check(all(bufs[t] == pattern(prv * 100 + t, 20000 + t) for t in tags), "Irecv window")

    big = bytearray(2 << 20)
    comm.Sendrecv(pattern(me + 7, 2 << 20), dest=nxt, recvbuf=big, source=prv)
    check(big == pattern(prv + 7, 2 << 20), "Sendrecv(2 MiB)")

    all_failed = comm.gather(failed, root=0)
    all_checks = comm.reduce(checks, op=MPI.SUM, root=0)
    if me == 0:
        errors = [f"rank {r}: {w}" for r, f in enumerate(all_failed) for w in f]
        print(json.dumps({"test": "mpi4py_check", "ranks": n, "checks": all_checks,
                          "errors": len(errors), "failed": errors}), flush=True)
        return 1 if errors else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
