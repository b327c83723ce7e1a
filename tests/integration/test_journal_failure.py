"""A journal whose fsync fails (EIO from the operating system, injected with os.fdatasync):
final, but visible, and refusing rather than hanging. (A full disk, which is survived, is
tests/fault/test_disk_full.py.)"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
from pathlib import Path
from typing import Any

import pytest

import ferrymq.client as fc
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.store.file import FileJournal


def addr(port: int) -> str:
    return f"127.0.0.1({port})"


async def test_after_a_failed_fsync_persistent_work_is_refused_not_hung(
        make_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = await make_server(FileJournal(tmp_path / "qm1"))
    async with await fc.connect_async("QM1", addr(server.port), timeout=10) as c:
        q = await c.open("Q1")
        await q.put(b"stored", persistent=True)

    def eio(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fdatasync", eio)
    c1 = await fc.connect_async("QM1", addr(server.port), timeout=10)
    q1 = await c1.open("Q1")
    with pytest.raises(MQError) as e:  # its outcome is unknown: the connection ends
        await asyncio.wait_for(q1.put(b"in doubt", persistent=True), 5)
    assert e.value.reason == C.MQRC_CONNECTION_BROKEN
    with contextlib.suppress(MQError):
        await c1.disconnect()

    health = server.stats()["journal"]
    assert health["state"] == "failed" and "Input/output" in health["detail"]
    async with await fc.connect_async("QM1", addr(server.port), timeout=10) as c2:
        q2 = await c2.open("Q1")
        for _ in range(2):  # refused at once, every time, naming the failure
            with pytest.raises(MQError) as e:
                await asyncio.wait_for(q2.put(b"refused", persistent=True), 5)
            assert (e.value.comp, e.value.reason) == (C.MQCC_FAILED, C.MQRC_RESOURCE_PROBLEM)
            assert "journal failed" in e.value.detail and "restart" in e.value.detail
        other = await c2.open("Q2")
        await other.put(b"transient", persistent=False)  # non-persistent work goes on
        assert (await other.get()).data == b"transient"
    async with await fc.connect_async("QM1", addr(server.port), timeout=10) as c3:
        q3 = await c3.open("Q1")
        with pytest.raises(MQError) as e:  # a get's delete can never be durable: it ends, it does not hang
            await asyncio.wait_for(q3.get(), 5)
        assert e.value.reason == C.MQRC_CONNECTION_BROKEN
