"""`rdma-webhook verify` on whole log files written for this suite (tests/cli/verify_logs/): the
release boundaries where NCCL changed a format, launcher and collector prefixes, plugins, and
the damage real logs carry (cut lines, CRLF, bytes that are not UTF-8, over-long lines, empty
input). Every line was written here from the format strings named in docs/verify.md and
NCCL's source at the release named in the case; hosts, addresses and numbers are made up.

Each case names what verify must say; a field the log cannot decide is expected as "unknown".
"""
import json

import pytest

from conftest import REPO, rw

LOGS = REPO / "tests" / "cli" / "verify_logs"

# file(s) -> (interNode, gdr, outcome, cause, extra fields of the JSON verdict)
CASES = {
    # kubectl logs --prefix --timestamps of two pods, interleaved; 2.21.5 on SR-IOV RoCE VFs.
    "kubectl-prefix-timestamps-roce.log": ("RoCE", "on", "ok", "none",
                                           {"nodes": 2, "ncclVersion": "2.21.5"}),
    # The same two pods as the kubelet's CRI files hold them (`<time> stdout F <line>`), merged.
    "cri-node-log-format.log": ("RoCE", "on", "ok", "none", {"nodes": 2}),
    # The same run under srun --label (`0: `) and under pdsh (`host: `).
    "srun-label-prefix.log": ("RoCE", "on", "ok", "none", {"nodes": 2}),
    "pdsh-host-prefix.log": ("RoCE", "on", "ok", "none", {"nodes": 2}),
    # The same log saved with CRLF line ends.
    "crlf-roce.log": ("RoCE", "on", "ok", "none", {"nodes": 2}),
    # 2.19.3 under torchrun: one pod has its VF, the other finds no device and takes Socket.
    "torchrun-some-ranks-socket.log": ("RoCE", "unknown", "fell-back", "no-rdma-device", {}),
    # NCCL_DEBUG_FILE: one file per process, init lines only (the results went to stdout).
    ("debug-file-node-a.log", "debug-file-node-b.log"): ("IB", "on", "unknown", "unknown",
                                                         {"nodes": 2, "linkLayer": "IB"}),
    # 2.3 under mpirun: device list one port a line, GDR off for lack of the peer-memory module.
    "nccl-2.3-mpirun-ib.log": ("RoCE", "off", "fell-back", "gdr-unavailable",
                               {"linkLayer": "RoCE", "ncclVersion": "2.3.7"}),
    # 2.5 ring lines with bus ids; init only.
    "nccl-2.5-ring-busid.log": ("IB", "on", "unknown", "unknown", {"nodes": 2}),
    # 2.26 WARN with its timestamp after mpirun's tag: completion status 12.
    "nccl-2.26-mpirun-completion-12.log": ("RoCE", "on", "error", "fabric-unreachable", {}),
    # 2.28: the IB plugin fails to initialise, Socket is assigned.
    "nccl-2.28-ib-plugin-not-initialised.log": ("Socket", "off", "fell-back", "no-rdma-device",
                                                {}),
    # 2.23: version as an INFO line; libibverbs missing, Socket.
    "nccl-2.23-bootstrap-subsys-version-info.log": ("Socket", "off", "fell-back",
                                                    "libibverbs-missing",
                                                    {"ncclVersion": "2.23.4"}),
    # 2.24+: `NET/IB : Using [RO]; OOB ...` with no device after NCCL_IB_HCA filtered them all.
    "nccl-2.24-hca-filter-empty-using.log": ("Socket", "off", "fell-back", "hca-filter", {}),
    # 2.29: the per-GPU GDR line's new form and status=NAME(N) completion errors.
    "nccl-2.29-gdr-and-cqe-error.log": ("RoCE", "on", "error", "fabric-unreachable",
                                        {"ncclVersion": "2.29.2"}),
    # 2.30: plugin lines of 2.27+, the connect line spelled `qp_num`, GDR in the ring line.
    "nccl-2.30-roce-gid.log": ("RoCE", "on", "ok", "none", {"gidIndex": 3}),
    # 2.21 automatic GID selection: index 3 in one pod, 5 in the other; no job-wide index.
    "roce-gid-auto-per-pod.log": ("RoCE", "on", "ok", "none", {"gidIndex": None}),
    # NCCL_NET_GDR_LEVEL keeps GDR off by topology: a cause of an otherwise good run.
    "gdr-disabled-by-level.log": ("IB", "off", "ok", "gdr-unavailable", {}),
    "kubectl-prefix-ib-disabled.log": ("Socket", "off", "fell-back", "ib-disabled", {}),
    "tcpxo-fastrak-ok.log": ("GPUDirect-TCPXO", "on", "ok", "none", {"net": "FasTrak"}),
    # TCP plugins have no verbs NIC: GPUDirect RDMA is not applicable, never "off".
    "fastsocket-ok.log": ("FastSocket", "n/a", "ok", "none", {}),
    # NCCL prints `GPU Direct RDMA Disabled for HCA` for the plugin's TCP devices too: no cause.
    "fastsocket-hca-gdr-line.log": ("FastSocket", "n/a", "ok", "none", {"ncclVersion": "2.23.4"}),
    # GPUDirect-TCPX reads GPU memory itself: NCCL's /GDRDMA suffix is what the log says.
    "gpudirect-tcpx-ok.log": ("GPUDirect-TCPX", "on", "ok", "none", {"net": "GPUDirectTCPX_v7"}),
    "gib-ok.log": ("gIB", "on", "ok", "none", {}),
    # tqdm redraws with '\r': NCCL records sit after the bar inside one line.
    "progress-bar-carriage-returns.log": ("RoCE", "on", "ok", "none", {"nodes": 2}),
    # A 120 KB metrics line between NCCL's lines: cut at 64 KiB, the rest still read.
    "very-long-line.log": ("Socket", "off", "fell-back", "libibverbs-missing", {}),
    # The collector cut the last line inside the network name: no transport is proven.
    "cut-mid-line.log": ("unknown", "unknown", "unknown", "unknown", {}),
    "cut-network-name.log": ("unknown", "unknown", "unknown", "unknown", {}),
    # Latin-1 and binary bytes, one glued to the record that proves the cause.
    "non-utf8-socket.log": ("Socket", "off", "fell-back", "no-rdma-device", {}),
    # `kubectl logs --tail` of one pod: two local ranks of a 32-rank communicator, P2P only.
    # Its other ranks are elsewhere: not a single-node job, and no inter-node line is shown.
    "one-pod-excerpt-of-a-larger-job.log": ("unknown", "unknown", "unknown", "unknown",
                                            {"singleNode": False}),
    # One process per GPU, each seeing its GPU as [0]: four processes for four ranks, one node.
    "one-node-gpu-per-process.log": ("none (single node)", "unknown", "ok", "not-applicable",
                                     {"singleNode": True}),
    "empty.log": ("unknown", "unknown", "unknown", "unknown", {}),
    "never-initialised.log": ("unknown", "unknown", "unknown", "unknown", {}),
}


def files(key):
    return [LOGS / f for f in (key if isinstance(key, tuple) else (key,))]


def verdict(*paths, fmt="json"):
    r = rw("verify", "-o", fmt, *paths)
    assert r.rc in (0, 1, 3), r
    return r, json.loads(r.out)


@pytest.mark.parametrize("key", CASES, ids=[k if isinstance(k, str) else "+".join(k) for k in CASES])
def test_case(key):
    inter, gdr, outcome, cause, extra = CASES[key]
    paths = files(key)
    r, d = verdict(*paths)
    got = (d["interNode"], d["gdr"], d["outcome"], d["cause"])
    assert got == (inter, gdr, outcome, cause), d["explanation"]
    for field, want in extra.items():
        assert d[field] == want, (field, d)
    assert r.rc == {"ok": 0, "unknown": 3}.get(outcome, 1)
    text = "".join(p.read_bytes().decode("utf-8", errors="replace") for p in paths)
    for proof in d["proofs"]:
        assert proof["text"] in text, proof
    if outcome not in ("ok", "unknown"):
        assert d["proofs"], "a cause without a quoted line"


def test_a_mixed_run_names_the_processes_on_socket():
    _, d = verdict(LOGS / "torchrun-some-ranks-socket.log")
    assert "1 process used Socket (trainer-1:188)" in d["explanation"], d["explanation"]


def test_ib_without_a_link_layer_says_so():
    _, d = verdict(LOGS / "nccl-2.5-ring-busid.log")
    assert d["linkLayer"] == "IB"  # `mlx5_0:1/IB` is printed
    stripped = LOGS / "nccl-2.5-ring-busid.log"
    lines = [l for l in stripped.read_text().splitlines() if "NET/IB : Using" not in l]
    r = rw("verify", "-o", "json", "-", input="\n".join(lines) + "\n")
    d = r.json()
    assert d["interNode"] == "IB" and d["linkLayer"] is None, d
    assert "InfiniBand or RoCE" in d["explanation"]


def test_per_process_gid_indexes():
    _, d = verdict(LOGS / "roce-gid-auto-per-pod.log")
    assert sorted(p["gidIndex"] for p in d["processes"]) == [3, 5]


def test_crlf_is_not_quoted():
    _, d = verdict(LOGS / "crlf-roce.log")
    assert d["proofs"] and not any("\r" in p["text"] for p in d["proofs"])


def test_progress_bar_does_not_become_part_of_a_host():
    _, d = verdict(LOGS / "progress-bar-carriage-returns.log")
    assert sorted(p["host"] for p in d["processes"]) == ["pb-0", "pb-1"]


def test_a_process_seen_only_after_a_carriage_return_keeps_its_host():
    bar = "".join(f"\rstep {i}/9 [00:0{i}<00:09]" for i in range(9))
    text = (f"{bar}\rcr-1:9:9 [0] NCCL INFO Bootstrap : Using eth0:10.3.0.9<0>\n"
            f"{bar}\rcr-1:9:30 [0] NCCL INFO Using network IB\n")
    d = rw("verify", "-o", "json", "-", input=text).json()
    assert [p["host"] for p in d["processes"]] == ["cr-1"], d["processes"]


def test_a_record_after_a_long_line_is_quoted_from_its_header():
    bar = "".join(f"\rstep {i}/99" for i in range(99))
    text = (f"{bar}\rq-0:9:9 [0] NCCL INFO NET/IB : No device found.\n"
            "q-0:9:9 [0] NCCL INFO Using network Socket\n"
            "q-0:9:9 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0\n")
    d = rw("verify", "-o", "json", "-", input=text).json()
    assert {"source": "-", "line": 1, "text": "q-0:9:9 [0] NCCL INFO NET/IB : No device found."} \
        in d["proofs"], d["proofs"]


def test_over_long_line_is_counted():
    _, d = verdict(LOGS / "very-long-line.log")
    assert d["read"]["linesCut"] == 1


def test_bytes_that_are_not_utf8_still_give_json_and_sarif():
    path = LOGS / "non-utf8-socket.log"
    _, d = verdict(path)
    assert any("\ufffd" in p["text"] for p in d["proofs"]), d["proofs"]
    r, s = verdict(path, fmt="sarif")
    assert s["runs"][0]["results"][0]["ruleId"] == "no-rdma-device"


def test_a_cut_name_is_named_as_the_reason_for_unknown():
    _, d = verdict(LOGS / "cut-mid-line.log")
    assert "cut-mid-line.log:5 is cut short" in d["explanation"], d["explanation"]


def test_a_cut_name_on_a_whole_line_is_still_believed_when_known():
    # The last line ends without a newline but holds the whole name: it still counts.
    text = (LOGS / "cut-network-name.log").read_text().rsplit("\n", 1)[0]
    r = rw("verify", "-o", "json", "-", input=text + "\nx-1:15:41 [0] NCCL INFO Using network Socket")
    d = r.json()
    assert (d["interNode"], d["outcome"], d["cause"]) == ("Socket", "fell-back", "no-rdma-device")


# --- the kubelet's CRI files: `P` records are parts of one line, joined up to the `F` record ---

CRI = "2026-11-30T10:04:12.000118220Z"


def test_cri_partial_records_are_joined_per_stream():
    # Each pod's `NET/IB : No device found.` is glued after a progress bar on stdout, and the
    # kubelet split the line at 16 KiB inside the record (worker-0 with a stderr record between
    # the parts, worker-1 in three parts). Read part by part, the cause is lost.
    r, d = verdict(LOGS / "cri-partial-lines.log")
    got = (d["interNode"], d["gdr"], d["outcome"], d["cause"])
    assert got == ("Socket", "off", "fell-back", "no-rdma-device"), d["explanation"]
    # The proofs point to the line where each joined line starts, and quote the record, not the
    # 16 KiB of progress bar before it.
    lines = [p["line"] for p in d["proofs"]
             if p["text"] in ("cri-w-0:58:58 [0] NCCL INFO NET/IB : No device found.",
                              "cri-w-1:61:61 [0] NCCL INFO NET/IB : No device found.")]
    assert sorted(lines) == [4, 13], d["proofs"]
    assert d["read"]["linesCut"] == 0 and d["read"]["lines"] == 20


def cri_line(stream, tag, text):
    return f"{CRI} {stream} {tag} {text}\n"


def test_cri_joined_line_is_bounded_at_64_kib():
    # Five 16 KiB parts and the end: the joined line is cut at 64 KiB (counted once), the record
    # past the bound is not read, and the next line is read as usual.
    bar = "x" * 16384
    text = "".join(cri_line("stdout", "P", bar) for _ in range(5))
    text += cri_line("stdout", "F", "big-0:7:7 [0] NCCL INFO Using network IB")
    text += cri_line("stdout", "F", "big-0:7:7 [0] NCCL INFO Using network Socket")
    d = rw("verify", "-o", "json", "-", input=text).json()
    assert d["read"]["linesCut"] == 1, d["read"]
    assert d["net"] == "Socket", d


def test_cri_partial_record_without_its_end_is_read_as_cut():
    # The file ends before the `F` record: what was joined is read, flagged as cut, so a name at
    # its end proves nothing.
    text = cri_line("stdout", "F", "end-0:7:7 [0] NCCL INFO Bootstrap : Using eth0:10.9.0.1<0>")
    text += cri_line("stdout", "P", "end-0:7:7 [0] NCCL INFO Using network Soc")
    d = rw("verify", "-o", "json", "-", input=text).json()
    assert d["interNode"] == "unknown", d
    assert ":2 is cut short" in d["explanation"], d["explanation"]
    # With its end the same line proves Socket.
    d = rw("verify", "-o", "json", "-", input=text + cri_line("stdout", "F", "ket")).json()
    assert d["net"] == "Socket", d


# --- a restarted container: its previous log, then the current one ---


def test_a_restarted_container_is_judged_on_its_last_run():
    # `kubectl logs --previous` then `kubectl logs` of one pod: the first run had no VF and took
    # Socket, then died; the second, with the VF, ran on RoCE. The same process (host:pid, pid 1
    # in the container) prints NCCL's banner twice: two runs, never one mixed run.
    r, d = verdict(LOGS / "restarted-container-previous-then-current.log")
    got = (d["interNode"], d["gdr"], d["outcome"], d["cause"])
    assert got == ("RoCE", "on", "ok", "none"), d["explanation"]
    assert d["read"]["previousRuns"] == 1
    assert d["read"]["lastRunFrom"].endswith("restarted-container-previous-then-current.log:14")
    assert "a previous run of the same process" in d["explanation"], d["explanation"]
    assert "used Socket" not in d["explanation"]
    assert all(p["line"] >= 14 for p in d["proofs"]), d["proofs"]


def test_processes_of_one_pod_each_print_their_banner():
    # One process per GPU: every process prints the banner once; no restart.
    text = "".join(f"gp-0:{pid}:{pid} [0] NCCL INFO NCCL version 2.23.4+cuda12.6\n"
                   f"gp-0:{pid}:{pid} [0] NCCL INFO Using network IB\n" for pid in (10, 11, 12))
    d = rw("verify", "-o", "json", "-", input=text).json()
    assert d["read"]["previousRuns"] == 0 and len(d["processes"]) == 3, d


def test_a_restart_after_other_pods_lines_is_not_split():
    # Another pod's lines came first: the job-wide evidence cannot be told apart by run, so both
    # runs are read together, and the explanation says why.
    text = ("pa-0:1:1 [0] NCCL INFO NCCL version 2.23.4+cuda12.6\n"
            "pb-0:1:1 [0] NCCL INFO NCCL version 2.23.4+cuda12.6\n"
            "pa-0:1:1 [0] NCCL INFO Using network Socket\n"
            "pa-0:1:1 [0] NCCL INFO NCCL version 2.23.4+cuda12.6\n"
            "pa-0:1:1 [0] NCCL INFO Using network IB\n")
    d = rw("verify", "-o", "json", "-", input=text).json()
    assert d["read"]["previousRuns"] == 0, d
    assert "pa-0:1 at -:4 initialised NCCL a second time" in d["explanation"], d["explanation"]
