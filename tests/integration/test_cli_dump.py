"""``ferrymq dump`` and ``ferrymq load`` run as a user runs them, against a running queue manager.

The round trip puts messages with every MQMD field set (through set all context), every
property type and bodies of many lengths, dumps them, loads the file into another queue
and compares the two queues byte for byte. Its size is FERRYMQ_DUMP_TEST_MESSAGES (2,000
in the suite; ``FERRYMQ_DUMP_TEST_MESSAGES=100000 pytest tests/integration/test_cli_dump.py
-k round_trip`` is the full-size run).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from qm_process import QueueManagerProcess

from ferrymq.client.message import Message
from ferrymq.client.sync import Client, connect
from ferrymq.mq import constants as C
from ferrymq.properties.model import Descriptor, PropertySet
from ferrymq.wire.mqmd import FIELD_NAMES, MQMD

pytestmark = pytest.mark.timeout(900)

MESSAGES = int(os.environ.get("FERRYMQ_DUMP_TEST_MESSAGES", "2000"))


@pytest.fixture(scope="module")
def qm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QueueManagerProcess]:
    q = QueueManagerProcess(tmp_path_factory.mktemp("dump") / "home").start()
    q.mqsc("DEFINE QLOCAL(SRC) MAXDEPTH(999999)\nDEFINE QLOCAL(DST) MAXDEPTH(999999)\n"
           "DEFINE QLOCAL(F1)\nDEFINE QLOCAL(F2)\nDEFINE QLOCAL(BAD)\n")
    yield q
    q.stop()


def ferrymq(qm: QueueManagerProcess, *args: str, code: int = 0, **environ: str) -> dict[str, Any]:
    env = dict(os.environ, FERRYMQ_HOME=str(qm.home), **environ)
    p = subprocess.run([sys.executable, "-m", "ferrymq.cli", *args, "--output", "json"], env=env,
                       capture_output=True, text=True, timeout=800)
    assert p.returncode == code, f"ferrymq {' '.join(args)} -> {p.returncode}\n{p.stdout}\n{p.stderr}"
    doc: dict[str, Any] = json.loads(p.stdout)
    return doc


def client(qm: QueueManagerProcess) -> Client:
    return connect(qm.name, qm.conn_name, max_msg_length=8 * 1024 * 1024)


def stamp(when: datetime) -> tuple[str, str]:
    return when.strftime("%Y%m%d"), when.strftime("%H%M%S") + f"{when.microsecond // 10000:02d}"


def descriptor(i: int, rng: random.Random, put_at: datetime) -> MQMD:
    """A descriptor with every field a put may set, different from message to message."""
    date, tod = stamp(put_at)
    group = i % 7 == 0
    return MQMD(version=2, report=[0, C.MQRO_COA, C.MQRO_COD | C.MQRO_PASS_MSG_ID, C.MQRO_EXCEPTION_WITH_DATA][i % 4],
                msg_type=[C.MQMT_DATAGRAM, C.MQMT_REQUEST, C.MQMT_REPLY, C.MQMT_REPORT, 65536][i % 5],
                expiry=-1 if i % 9 else 36_000_000, feedback=[0, C.MQFB_COA, 1000][i % 3],
                encoding=[546, 273, 785][i % 3], coded_char_set_id=[1208, 819, 437, 0][i % 4],
                format=["MQSTR", "", "MYFMT"][i % 3], priority=i % 10, persistence=i % 2,
                msg_id=rng.randbytes(24), correl_id=rng.randbytes(24) if i % 2 else bytes(24),
                reply_to_q="REPLY.Q" if i % 20 else "", reply_to_q_mgr="QMX" if i % 2 else "",
                user_identifier=f"user{i % 50}", accounting_token=rng.randbytes(32),
                appl_identity_data=f"identity {i}", put_appl_type=[C.MQAT_UNIX, C.MQAT_JAVA, 28][i % 3],
                put_appl_name=f"app {i % 13} \u00e9", put_date=date, put_time=tod, appl_origin_data=f"o{i % 10}",
                group_id=rng.randbytes(24) if group else bytes(24), msg_seq_number=1 + i % 3 if group else 1,
                offset=0, msg_flags=C.MQMF_MSG_IN_GROUP if group else 0, original_length=-1)


def properties(i: int, rng: random.Random) -> PropertySet | None:
    if i % 5 == 4:
        return None
    p = PropertySet()
    p["usr.text"] = f"value {i} \"quoted\" \u2603"
    p.set("usr.i8", -i % 128, C.MQTYPE_INT8)
    p.set("usr.i16", i % 30000, C.MQTYPE_INT16)
    p.set("usr.i32", i, C.MQTYPE_INT32)
    p.set("usr.i64", i << 40, C.MQTYPE_INT64)
    p.set("usr.f32", i / 3, C.MQTYPE_FLOAT32)
    p.set("usr.f64", i / 7, C.MQTYPE_FLOAT64)
    p["usr.flag"] = i % 2 == 0
    p["usr.bytes"] = rng.randbytes(i % 40)
    p["usr.none"] = None
    p.set("usr.pd", "x", C.MQTYPE_STRING, Descriptor(C.MQPD_SUPPORT_OPTIONAL, C.MQPD_USER_CONTEXT, C.MQCOPY_REPLY))
    return p


def body(i: int, rng: random.Random) -> bytes:
    if i % 1000 == 999:
        return rng.randbytes(70_000)
    return rng.randbytes([0, 1, 63, 64, 65, 200][i % 6] + i % 50)


def put_all(c: Client, queue: str, items: list[tuple[MQMD, PropertySet | None, bytes]]) -> None:
    q = c.open(queue, options=C.MQOO_OUTPUT | C.MQOO_SET_ALL_CONTEXT)
    for n, (md, props, data) in enumerate(items, 1):
        q.put(data, md=md, properties=props, options=C.MQPMO_SET_ALL_CONTEXT, syncpoint=True, async_put=True)
        if n % 500 == 0:
            c.commit()
    c.commit()
    status = c.stat()
    assert status.failures == 0, status.first_error
    q.close()


def browse(c: Client, queue: str) -> list[Message]:
    with c.open(queue, options=C.MQOO_BROWSE) as q:
        return list(q.browse())


def comparable(md: MQMD) -> bytes:
    """The descriptor but for Expiry (remaining time: it counts down) and BackoutCount."""
    return md.replace(expiry=0, backout_count=0).pack()


def test_round_trip_keeps_every_field_byte_for_byte(qm: QueueManagerProcess, tmp_path: Path) -> None:
    rng = random.Random(22)
    now = datetime.now(UTC)
    items = [(descriptor(i, rng, now - timedelta(seconds=i)), properties(i, rng), body(i, rng)) for i in range(MESSAGES)]
    with client(qm) as c:
        put_all(c, "SRC", items)
        before = browse(c, "SRC")
    assert len(before) == MESSAGES
    dump_file = tmp_path / "src.dump"
    dumped = ferrymq(qm, "dump", qm.name, "--queue", "SRC", "--file", str(dump_file))
    assert dumped["messages"] == MESSAGES and dumped["mode"] == "browse"
    assert dump_file.stat().st_mode & 0o777 == 0o600  # it holds message bodies
    loaded = ferrymq(qm, "load", qm.name, "--queue", "DST", "--file", str(dump_file), "--batch", "500")
    assert loaded["messages"] == MESSAGES
    with client(qm) as c:
        after = browse(c, "DST")
        assert len(browse(c, "SRC")) == MESSAGES  # a browse dump leaves the queue as it was
    assert len(after) == MESSAGES
    for a, b in zip(before, after, strict=True):
        assert comparable(b.md) == comparable(a.md), [f for f in FIELD_NAMES if getattr(a.md, f) != getattr(b.md, f)]
        assert b.data == a.data
        assert list(b.properties.typed_items()) == list(a.properties.typed_items())
        if a.md.expiry == -1:
            assert b.md.expiry == -1
        else:  # the time left when dumped, counted again from the load
            assert 0 < b.md.expiry <= a.md.expiry
    # The rates, for bench/RESULTS.md: messages per second of each command, end to end.
    print(f"dump {dumped['messages_per_second']}/s, load {loaded['messages_per_second']}/s of {MESSAGES}")


def _aged(c: Client, queue: str, ages_hours: list[int]) -> list[MQMD]:
    now = datetime.now(UTC)
    rng = random.Random(5)
    items = [(descriptor(i + 1, rng, now - timedelta(hours=h)).replace(msg_flags=0, group_id=bytes(24),
                                                                       msg_seq_number=1, expiry=-1), None, b"m%d" % i)
             for i, h in enumerate(ages_hours)]
    put_all(c, queue, items)
    return [md for md, _, _ in items]


def test_filters_by_age_count_and_ids(qm: QueueManagerProcess, tmp_path: Path) -> None:
    ages = [48, 30, 10, 1, 0, 0]  # hours since put
    with client(qm) as c:
        mds = _aged(c, "F1", ages)
    old = ferrymq(qm, "dump", qm.name, "-q", "F1", "-f", str(tmp_path / "old"), "--older-than", "1d")
    assert old["messages"] == 2
    recent = ferrymq(qm, "dump", qm.name, "-q", "F1", "-f", str(tmp_path / "recent"), "--newer-than", "2h")
    assert recent["messages"] == 3
    window = ferrymq(qm, "dump", qm.name, "-q", "F1", "-f", str(tmp_path / "window"), "--older-than", "5h",
                     "--newer-than", "40h")
    assert window["messages"] == 2
    first = ferrymq(qm, "dump", qm.name, "-q", "F1", "-f", str(tmp_path / "first"), "--count", "4")
    assert first["messages"] == 4
    target = mds[2].msg_id
    one = ferrymq(qm, "dump", qm.name, "-q", "F1", "-f", str(tmp_path / "one"), "--msg-id", target.hex())
    assert one["messages"] == 1
    by_correl = ferrymq(qm, "dump", qm.name, "-q", "F1", "-f", str(tmp_path / "correl"), "--correl-id",
                        mds[0].correl_id.hex())
    assert by_correl["messages"] == 1
    assert b"MD MsgId " + target.hex().encode() in (tmp_path / "one").read_bytes()
    # --move takes only what it selects, and the file holds exactly those
    moved = ferrymq(qm, "dump", qm.name, "-q", "F1", "-f", str(tmp_path / "moved"), "--move", "--older-than", "1d",
                    "--batch", "1")
    assert moved["messages"] == 2 and moved["mode"] == "move"
    with client(qm) as c:
        left = browse(c, "F1")
    assert {m.msg_id for m in left} == {md.msg_id for md in mds[2:]}  # in priority order
    # an existing file is not overwritten without --replace
    refused = ferrymq(qm, "dump", qm.name, "-q", "F1", "-f", str(tmp_path / "moved"), code=8)
    assert refused["error"]["rule"] == "file_exists"


def test_move_in_batches_then_load_puts_them_back(qm: QueueManagerProcess, tmp_path: Path) -> None:
    rng = random.Random(9)
    now = datetime.now(UTC)
    items = [(descriptor(i, rng, now), properties(i, rng), body(i, rng)) for i in range(250)]
    with client(qm) as c:
        put_all(c, "F2", items)
        before = browse(c, "F2")
    f = tmp_path / "moved.dump"
    moved = ferrymq(qm, "dump", qm.name, "-q", "F2", "-f", str(f), "--move", "--batch", "64", "--conn", qm.conn_name)
    assert moved["messages"] == 250
    with client(qm) as c:
        assert browse(c, "F2") == []
    ferrymq(qm, "load", qm.name, "-q", "F2", "-f", str(f))
    with client(qm) as c:
        after = browse(c, "F2")
    assert [comparable(m.md) for m in after] == [comparable(m.md) for m in before]


def _corrupt(src: Path, dst: Path, line: int, new: bytes | None) -> None:
    lines = src.read_bytes().split(b"\n")
    if new is None:
        dst.write_bytes(b"\n".join(lines[: line - 1]) + b"\n" + lines[line - 1][:5])
    else:
        lines[line - 1] = new
        dst.write_bytes(b"\n".join(lines))


def test_a_damaged_file_is_refused_naming_the_line_and_nothing_is_loaded(qm: QueueManagerProcess,
                                                                          tmp_path: Path) -> None:
    with client(qm) as c:
        _aged(c, "BAD", [0, 0, 0])
    good = tmp_path / "good.dump"
    ferrymq(qm, "dump", qm.name, "-q", "BAD", "-f", str(good))
    lines = good.read_bytes().split(b"\n")
    priority = next(n for n, text in enumerate(lines, 1) if text.startswith(b"MD Priority") and n > 40)
    cases = {
        "changed": (priority, b"MD Priority 7"),  # a valid line, but not what was written: the checksum
        "garbage": (priority, b"MD Priority seven"),
        "unknown": (priority, b"MD Colour 7"),
        "long": (priority, b"X " + b"00" * 600_000),
        "truncated": (priority, None),
    }
    for label, (line, new) in cases.items():
        bad = tmp_path / f"{label}.dump"
        _corrupt(good, bad, line, new)
        doc = ferrymq(qm, "load", qm.name, "-q", "BAD", "-f", str(bad), code=2)
        err = doc["error"]
        assert err["rule"] == "dump_file_invalid", err
        expected_line = next(n for n, text in enumerate(lines, 1) if text.startswith(b"END 2")) \
            if label == "changed" else line
        assert err["line"] == expected_line, (label, err)
        assert f"line {expected_line}" in err["message"]
    no_total = tmp_path / "no_total.dump"
    no_total.write_bytes(b"\n".join(lines[:-2]) + b"\n")
    err = ferrymq(qm, "load", qm.name, "-q", "BAD", "-f", str(no_total), code=2)["error"]
    assert err["line"] == len(lines) - 1 and "truncated" in err["message"]
    with client(qm) as c:
        assert len(browse(c, "BAD")) == 3  # only the three put at the start: nothing loaded


def test_load_needs_setall_authority(qm: QueueManagerProcess, tmp_path: Path) -> None:
    """The OAM decides: a user who may put but not set all context loads nothing."""
    qm.mqsc("DEFINE QLOCAL(AUTHQ)\n")
    with client(qm) as c:
        _aged(c, "AUTHQ", [0, 0])
    f = tmp_path / "two.dump"
    ferrymq(qm, "dump", qm.name, "-q", "AUTHQ", "-f", str(f))
    qm.add_user("loader", "loader-pw")
    env = dict(os.environ, FERRYMQ_HOME=str(qm.home))
    for args in (("-t", "qmgr", "+connect"), ("-t", "queue", "-n", "AUTHQ", "+put", "+inq")):
        subprocess.run([sys.executable, "-m", "ferrymq.cli", "setmqaut", qm.name, *args[:-1], "-p", "loader",
                        args[-1]], env=env, check=True, capture_output=True, timeout=60)
    with client(qm) as c:
        depth = len(browse(c, "AUTHQ"))
    as_loader = {"FERRYMQ_USER": "loader", "FERRYMQ_PASSWORD": "loader-pw"}
    err = ferrymq(qm, "load", qm.name, "-q", "AUTHQ", "-f", str(f), "--conn", qm.conn_name, code=2, **as_loader)["error"]
    assert err["rule"] == "mq_call_failed" and err["reason"] == C.MQRC_NOT_AUTHORIZED and "setall" in err["message"]
    subprocess.run([sys.executable, "-m", "ferrymq.cli", "setmqaut", qm.name, "-t", "queue", "-n", "AUTHQ", "-p",
                    "loader", "+setall"], env=env, check=True, capture_output=True, timeout=60)
    with client(qm) as c:
        assert len(browse(c, "AUTHQ")) == depth  # the refused load put nothing
    done = ferrymq(qm, "load", qm.name, "-q", "AUTHQ", "-f", str(f), "--conn", qm.conn_name, **as_loader)
    assert done["messages"] == 2
