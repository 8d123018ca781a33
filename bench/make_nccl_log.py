#!/usr/bin/env python3
"""Writes a large NCCL log for `bench/verify_big_log.sh`: SIZE_MB megabytes (default 1024) of
what `kubectl logs --timestamps` gives for a many-rank job with NCCL_DEBUG=INFO and
NCCL_DEBUG_SUBSYS=INIT,BOOTSTRAP,ENV,NET: each communicator's init lines per rank (2.26 formats:
bootstrap, NET/IB devices, comm/nNodes, GDR per HCA, channel lines), interleaved with the
application's progress lines, repeated with new pods, pids and communicators until the size is
reached. Constructed from NCCL's format strings; hosts and addresses are made up.

  bench/make_nccl_log.py OUT [SIZE_MB]
"""
import sys


def block(job, ranks_per_node=8, nodes=4):
    out = []
    ts = f"2026-01-01T00:{job // 60 % 60:02d}:{job % 60:02d}.000000000Z"
    n = ranks_per_node * nodes
    for node in range(nodes):
        host = f"train-{job}-worker-{node}"
        ip = f"10.{job % 200}.{node}.{7 + job % 50}"
        for lr in range(ranks_per_node):
            rank = node * ranks_per_node + lr
            pid = 100 + lr + 17 * job % 9000
            p = f"{ts} {host}:{pid}:{pid + 40} [{lr}] NCCL INFO "
            out.append(p + f"Bootstrap: Using eth0:{ip}<0>")
            out.append(p + "NET/Plugin: Could not find: libnccl-net.so. Using internal net plugin.")
            out.append(p + "NET/IB : Using " +
                       " ".join(f"[{i}]mlx5_{i + 2}:1/RoCE" for i in range(8)) +
                       f" [RO]; OOB eth0:{ip}<0>")
            out.append(p + "Using network IB")
            out.append(p + f"comm 0x{job:x}{rank:04x} rank {rank} nRanks {n} nNodes {nodes} "
                           f"localRanks {ranks_per_node} localRank {lr} MNNVL 0")
            out.append(p + f"NET/IB : GPU Direct RDMA Enabled for HCA {lr} 'mlx5_{lr + 2}'")
            for ch in range(16):
                peer = (rank + 1) % n
                if lr == ranks_per_node - 1:
                    out.append(p + f"Channel {ch:02d}/0 : {rank}[{lr}] -> {peer}[0] [send] via "
                                   f"NET/IB/{ch % 8}/GDRDMA")
                else:
                    out.append(p + f"Channel {ch:02d}/0 : {rank}[{lr}] -> {peer}[{lr + 1}] via "
                                   "P2P/CUMEM/read")
            out.append(p + "Connected all rings, use ring PXN 1 GDR 1")
            out.append(f"{ts} step {job} rank {rank}: loss 2.{rank:03d} tokens/s 1843.2")
    return "\n".join(out) + "\n"


def main():
    path = sys.argv[1]
    size = int(sys.argv[2]) * 1024 * 1024 if len(sys.argv) > 2 else 1024 * 1024 * 1024
    written = 0
    job = 0
    with open(path, "w") as f:
        while written < size:
            b = block(job)
            f.write(b)
            written += len(b)
            job += 1
        f.write("# Avg bus bandwidth    : 180.4\n")
    print(f"{path}: {written / 1e6:.0f} MB, {job} communicators")


main()
