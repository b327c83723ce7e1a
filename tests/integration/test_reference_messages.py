"""A file between two real queue managers as reference messages (seed 003): the samples put
one MQRMH, ferrymq's reference exits move the bytes in pieces no longer than the channel's
MAXMSGL, the destination queue holds only references, the copy's SHA-256 is the original's,
and the receiving queue manager's peak RSS stays bounded.

The size is FERRYMQ_REFMSG_MIB (64 MiB by default; the full-size run of docs/distributed.md
is FERRYMQ_REFMSG_MIB=2048), the RSS bound FERRYMQ_REFMSG_RSS_MB (200)."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from channel_pair import setup_pair

import ferrymq.client as fc
from ferrymq.mq import constants as C
from ferrymq.wire.mqdlh import MQDLH

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
MIB = int(os.environ.get("FERRYMQ_REFMSG_MIB", "64"))
RSS_BOUND_MB = int(os.environ.get("FERRYMQ_REFMSG_RSS_MB", "200"))
MAXMSGL = 4 * 1024 * 1024
SEND = "ferrymq.channels.refexits:send_reference"
RECEIVE = "ferrymq.channels.refexits:receive_reference"


def peak_rss_mb(pid: int) -> float:
    """VmHWM: the most resident memory the process ever had."""
    status = Path(f"/proc/{pid}/status").read_text()
    m = re.search(r"^VmHWM:\s+(\d+) kB", status, re.M)
    assert m is not None, status
    return int(m.group(1)) / 1024


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def write_random(path: Path, mib: int) -> str:
    digest = hashlib.sha256()
    with open(path, "wb") as f:
        for _ in range(mib):
            block = os.urandom(1 << 20)
            digest.update(block)
            f.write(block)
    return digest.hexdigest()


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def sample(name: str, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SAMPLES / name), *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


def test_a_file_crosses_as_references(tmp_path: Path) -> None:
    bulk = {name: tmp_path / f"bulk-{name}" for name in ("QM1", "QM2")}
    for d in bulk.values():
        d.mkdir()
    qm1, qm2 = setup_pair(tmp_path / "home", create_args={n: ("--bulk-data-dir", str(d)) for n, d in bulk.items()})
    try:
        qm1.mqsc(f"ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(SDR) MAXMSGL({MAXMSGL}) MSGEXIT('{SEND}')")
        qm2.mqsc(f"ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(RCVR) MAXMSGL({MAXMSGL}) MSGEXIT('{RECEIVE}')")
        original = write_random(bulk["QM1"] / "big.bin", MIB)
        rss_before = peak_rss_mb(qm2.pid)
        cpu_before = cpu_seconds(qm1.pid), cpu_seconds(qm2.pid)
        started = time.monotonic()
        done = sample("amqsprm.py", "big.bin", "TO.QM2.APP", "QM1", "--conn", qm1.conn_name, "--dest",
                      "copies/big.bin", timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
        done = sample("amqsgrm.py", "APP.IN", "QM2", "--conn", qm2.conn_name, "--wait", "120",
                      timeout=120 + MIB * 2)
        assert done.returncode == 0, done.stdout + done.stderr
        pieces = re.findall(r"offset (\d+) length (\d+)( LAST)? \((\d+) bytes on the queue\)", done.stdout)
        # in order, each no longer than MAXMSGL, together the whole file; only references queued
        offsets = [int(p[0]) for p in pieces]
        lengths = [int(p[1]) for p in pieces]
        assert offsets == sorted(offsets) and sum(lengths) == MIB << 20
        assert all(0 < n < MAXMSGL for n in lengths) and len(pieces) >= MIB // 4 + 1
        assert [bool(p[2]) for p in pieces] == [False] * (len(pieces) - 1) + [True]
        assert all(int(p[3]) < 1024 for p in pieces), "a reference on the queue carried bulk data"
        assert sha256(bulk["QM2"] / "copies" / "big.bin") == original
        rss_after = peak_rss_mb(qm2.pid)
        print(f"\n{MIB} MiB in {len(pieces)} references, {time.monotonic() - started:.1f} s (load average "
              f"{os.getloadavg()[0]:.1f}); CPU s QM1 {cpu_seconds(qm1.pid) - cpu_before[0]:.1f}, QM2 "
              f"{cpu_seconds(qm2.pid) - cpu_before[1]:.1f}; QM2 peak RSS {rss_before:.0f} MB before, "
              f"{rss_after:.0f} MB after; QM1 peak RSS {peak_rss_mb(qm1.pid):.0f} MB")
        assert rss_after < RSS_BOUND_MB, f"QM2's peak RSS {rss_after:.0f} MB is not below {RSS_BOUND_MB} MB"
        assert "CURDEPTH(0)" in qm1.mqsc("DISPLAY QLOCAL(QM2) CURDEPTH")
        assert "CURDEPTH(0)" in qm2.mqsc("DISPLAY QLOCAL(SYSTEM.DEAD.LETTER.QUEUE) CURDEPTH")
    finally:
        qm1.stop()
        qm2.stop()


def test_a_name_escaping_the_directory_is_dead_lettered(tmp_path: Path) -> None:
    bulk = tmp_path / "bulk"
    bulk.mkdir()
    (tmp_path / "secret.bin").write_bytes(b"not to be sent")
    qm1, qm2 = setup_pair(tmp_path / "home", create_args={"QM1": ("--bulk-data-dir", str(bulk))})
    try:
        qm1.mqsc(f"ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(SDR) MSGEXIT('{SEND}')")
        done = sample("amqsprm.py", "../secret.bin", "TO.QM2.APP", "QM1", "--conn", qm1.conn_name, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
        with fc.connect("QM1", qm1.conn_name) as c1:
            dead = c1.open("SYSTEM.DEAD.LETTER.QUEUE").get(wait=30.0)
        dlh = MQDLH.unpack_from(dead.data)
        assert dlh.reason == C.MQRC_SRC_NAME_ERROR and b"RMH " in dead.data and b"not to be sent" not in dead.data
        assert "CURDEPTH(0)" in qm2.mqsc("DISPLAY QLOCAL(APP.IN) CURDEPTH")
    finally:
        qm1.stop()
        qm2.stop()
