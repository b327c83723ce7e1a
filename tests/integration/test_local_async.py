"""``connect_async`` with no address reaches a queue manager started from this home through its
local socket, as the blocking ``connect`` does (IBM's bindings): the connection is the OS user
at the other end of the socket, with no password."""

from __future__ import annotations

import getpass
from pathlib import Path

import pytest
from qm_process import QueueManagerProcess

from ferrymq.client import connect_async
from ferrymq.errors import MQError
from ferrymq.mq import constants as C


async def test_connect_async_by_name_uses_the_local_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    qm = QueueManagerProcess(home, "QM1").start()
    monkeypatch.setenv("FERRYMQ_HOME", str(home))
    try:
        qm.mqsc("DEFINE QLOCAL(APP.Q)\n")
        async with await connect_async("QM1") as c, await c.open("APP.Q") as q:
            await q.put(b"over the local socket")
            got = await q.get(wait=5.0)
        assert got.data == b"over the local socket"
        # the socket's OS user (SO_PEERCRED), not $FERRYMQ_USER, which a client over TCP would send
        assert got.md.user_identifier.strip() == getpass.getuser()[:12]
        qm.kill()  # its socket file stays behind: nothing answers there
        with pytest.raises(MQError) as info:
            await connect_async("QM1", connect_timeout=2.0)
        assert info.value.reason == C.MQRC_Q_MGR_NOT_AVAILABLE
        assert "QM1 is not running" in str(info.value)
    finally:
        qm.stop()
