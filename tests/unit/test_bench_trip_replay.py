"""The trip replay benches' check that a replayed client sent the live one's bytes: a
recording replayed in another process (a saved one, or the responder's, recorded in a
child process) differs only in the process and thread ids of its CONNECT, which must not
count; any other byte must."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ferrymq.protocol import codec
from ferrymq.protocol import events as E

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import client_trip_bench as bench


def _writes(pid: int, tid: int, tail: bytes = b"\x00" * 40) -> list[bytes]:
    connect = b"".join(codec.pack(E.Connect(1, "QM1", "app", pid=pid, tid=tid)))
    return [connect, tail]


class _Sent:
    def __init__(self, sent: list[bytes]) -> None:
        self.sent = sent


def test_another_process_ids_in_the_connect_are_the_same_bytes() -> None:
    bench.same_bytes("request", _Sent(_writes(4242, 4243)), _writes(17, 18))  # type: ignore[arg-type]


def test_a_connect_differing_elsewhere_is_other_bytes() -> None:
    ours = [b"".join(codec.pack(E.Connect(1, "QM1", "other", pid=17, tid=18))), b"\x00" * 40]
    with pytest.raises(SystemExit, match="other bytes"):
        bench.same_bytes("request", _Sent(ours), _writes(17, 18))  # type: ignore[arg-type]


def test_a_later_byte_differing_is_other_bytes() -> None:
    with pytest.raises(SystemExit, match="other bytes"):
        bench.same_bytes("respond", _Sent(_writes(17, 18, b"\x00" * 39 + b"\x01")),  # type: ignore[arg-type]
                         _writes(17, 18))
