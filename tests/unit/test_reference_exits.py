"""The reference-message exits on their own: a sending exit that reads pieces of an object
under bulk_data_dir and queues a reference for the rest, a receiving exit that writes them
in order and passes the MQRMH on without them; names that escape the directory refused."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from ferrymq.channels.exits import ChannelExitParms, ExitSettings
from ferrymq.channels.refexits import find_reference, inside, receive_reference, send_reference
from ferrymq.engine.channels import ChannelObject
from ferrymq.mq import constants as C
from ferrymq.mq import cxc as X
from ferrymq.wire.mqdh import MQDH, MQOR
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.mqrmh import MQRMH
from ferrymq.wire.mqxqh import pack_xmit


def reference(src: str, dest: str = "", *, offset: int = 0, length: int = 0, dh: bool = False,
              segment: bool = False) -> bytes:
    rmh = MQRMH(src_name=src, dest_name=dest, object_type="FILE", data_logical_length=length,
                data_logical_offset=offset % 10**9, data_logical_offset2=offset // 10**9)
    fmt = C.MQFMT_DIST_HEADER if dh else C.MQFMT_REF_MSG_HEADER
    md = MQMD(format=fmt, msg_flags=C.MQMF_SEGMENT if segment else 0, version=2 if segment else 1)
    head = pack_xmit("APP.IN", "QM2", md)
    if dh:
        head += MQDH(encoding=C.MQENC_NATIVE, coded_char_set_id=C.MQCCSI_INHERIT, format=C.MQFMT_REF_MSG_HEADER,
                     objects=(MQOR("APP.IN", "QM2"),)).pack()
    return head + rmh.pack()


def parms(chltype: str, bulk: Path, data: bytes, max_len: int = 0, queued: list[bytes] | None = None) \
        -> ChannelExitParms:
    p = ChannelExitParms(X.MQXT_CHANNEL_MSG_EXIT, "", ChannelObject("C", chltype, {}, 0.0),
                         ExitSettings("QM", None, bulk), exit_reason=X.MQXR_MSG, max_msg_length=max_len, data=data)
    if queued is not None:
        p.requeue = queued.append
    return p


def send_all(src_dir: Path, dst_dir: Path, first: bytes, max_len: int) -> list[bytes]:
    """Run a whole object through both exits as the channel would; the references passed on."""
    pending, passed = [first], []
    while pending:
        queued: list[bytes] = []
        p = parms("SDR", src_dir, pending.pop(0), max_len, queued)
        assert send_reference(p) == X.MQXCC_OK
        assert len(p.data) <= max_len
        pending += queued
        r = parms("RCVR", dst_dir, p.data)
        assert receive_reference(r) == X.MQXCC_OK
        passed.append(r.data)
    return passed


def test_an_object_crosses_in_pieces_in_order(tmp_path: Path) -> None:
    src, dst = tmp_path / "src", tmp_path / "dst"
    src.mkdir()
    dst.mkdir()
    body = os.urandom(10_000)
    (src / "big.bin").write_bytes(body)
    head_len = len(reference("big.bin", "out/copy.bin"))
    passed = send_all(src, dst, reference("big.bin", "out/copy.bin"), head_len + 3000)
    assert (dst / "out" / "copy.bin").read_bytes() == body
    pieces = [find_reference(d) for d in passed]
    assert all(f is not None and len(d) == f.offset + f.rmh.struc_length for f, d in zip(pieces, passed, strict=True))
    rmhs = [f.rmh for f in pieces if f is not None]
    assert [(r.logical_offset, r.data_logical_length, r.flags) for r in rmhs] == [
        (0, 3000, 0), (3000, 3000, 0), (6000, 3000, 0), (9000, 1000, C.MQRMHF_LAST)]
    assert oct((dst / "out" / "copy.bin").stat().st_mode & 0o777) == "0o600"


def test_a_range_behind_a_distribution_header_and_the_decimal_offset_split(tmp_path: Path) -> None:
    src, dst = tmp_path / "src", tmp_path / "dst"
    src.mkdir()
    dst.mkdir()
    with open(src / "sparse.bin", "wb") as f:  # 1.2 GB logical, a few bytes on disk
        f.truncate(1_200_000_100)
        f.seek(1_200_000_000)
        f.write(b"tail" * 25)
    first = reference("sparse.bin", offset=1_200_000_000, length=60, dh=True)
    queued: list[bytes] = []
    p = parms("SDR", src, first, len(first) + 50, queued)
    assert send_reference(p) == X.MQXCC_OK
    f = find_reference(p.data)
    assert f is not None and (f.rmh.data_logical_offset2, f.rmh.data_logical_offset) == (1, 200_000_000)
    assert p.data.endswith(b"tail" * 12 + b"ta") and f.rmh.flags == C.MQRMHF_NOT_LAST
    rest = find_reference(queued[0])
    assert rest is not None and (rest.rmh.logical_offset, rest.rmh.data_logical_length) == (1_200_000_050, 10)


@pytest.mark.parametrize("src, dest, feedback", [
    ("../outside.bin", "", C.MQRC_SRC_NAME_ERROR),
    ("/etc/passwd", "", C.MQRC_SRC_NAME_ERROR),
    ("missing.bin", "", C.MQRC_SRC_NAME_ERROR),
    ("ok.bin", "../../escape.bin", C.MQRC_DEST_NAME_ERROR),
    ("ok.bin", "/tmp/abs.bin", C.MQRC_DEST_NAME_ERROR),
])
def test_names_outside_the_directory_are_refused(tmp_path: Path, src: str, dest: str, feedback: int) -> None:
    (tmp_path / "ok.bin").write_bytes(b"data")
    (tmp_path / "outside.bin").write_bytes(b"secret")
    base = tmp_path / "base"
    base.mkdir()
    (base / "ok.bin").write_bytes(b"data")
    p = parms("SDR", base, reference(src, dest), 10_000, [])
    if feedback == C.MQRC_SRC_NAME_ERROR:
        assert send_reference(p) == X.MQXCC_SUPPRESS_FUNCTION and p.feedback == feedback
        return
    assert send_reference(p) == X.MQXCC_OK
    r = parms("RCVR", base, p.data)
    assert receive_reference(r) == X.MQXCC_SUPPRESS_FUNCTION and r.feedback == feedback
    assert not (tmp_path / "escape.bin").exists()


def test_out_of_order_segmented_and_other_messages(tmp_path: Path) -> None:
    (tmp_path / "f.bin").write_bytes(b"x" * 100)
    p = parms("SDR", tmp_path, reference("f.bin", "g.bin", offset=50), 10_000, [])
    assert send_reference(p) == X.MQXCC_OK
    r = parms("RCVR", tmp_path, p.data)  # g.bin has no bytes 0..49 yet
    assert receive_reference(r) == X.MQXCC_SUPPRESS_FUNCTION and r.feedback == C.MQRC_RMH_ERROR
    seg = parms("SDR", tmp_path, reference("f.bin", segment=True), 10_000, [])
    assert send_reference(seg) == X.MQXCC_SUPPRESS_FUNCTION and seg.feedback == C.MQRC_RMH_ERROR
    plain = pack_xmit("APP.IN", "QM2", MQMD(format=C.MQFMT_STRING)) + b"hello"
    for fn, chltype in ((send_reference, "SDR"), (receive_reference, "RCVR")):
        q = parms(chltype, tmp_path, plain, 10_000, [])
        assert fn(q) == X.MQXCC_OK and q.data == plain
    no_dir = parms("SDR", tmp_path, reference("f.bin"), 10_000, [])
    no_dir.settings = ExitSettings("QM", None, None)
    assert send_reference(no_dir) == X.MQXCC_SUPPRESS_FUNCTION and no_dir.feedback == C.MQRC_SRC_NAME_ERROR


def test_a_piece_sent_again_after_a_backout_writes_the_same_file(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "dst").mkdir()
    body = os.urandom(5000)
    (tmp_path / "src" / "a.bin").write_bytes(body)
    first = reference("a.bin")
    send_all(tmp_path / "src", tmp_path / "dst", first, len(first) + 2000)
    send_all(tmp_path / "src", tmp_path / "dst", first, len(first) + 2000)  # the whole object once more
    digest = hashlib.sha256((tmp_path / "dst" / "a.bin").read_bytes()).digest()
    assert digest == hashlib.sha256(body).digest()


def test_inside() -> None:
    base = Path("/srv/bulk")
    assert inside(base, "a/b.bin") == Path("/srv/bulk/a/b.bin").resolve()
    assert inside(base, "a/../../x") is None and inside(base, "") is None and inside(None, "a") is None
