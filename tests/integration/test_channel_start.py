"""START CHANNEL acts at once, as IBM's does: the command wakes the channel initiator
instead of waiting for its next look at the queued requests (issue 19)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from channel_nodes import Node, depth, put, start_node, stop_node, wait_until

from ferrymq.channels import initiator
from ferrymq.store.file import FileJournal

CHANNEL = "QM1.TO.QM2"


@pytest.fixture
async def pair(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[Node, Node]]:
    monkeypatch.setattr(initiator, "POLL", 3600.0)  # no poll comes to the rescue within the test
    qm2 = await start_node("QM2", FileJournal(tmp_path / "qm2"),
                           "DEFINE LISTENER(CHL.LISTENER) TRPTYPE(TCP) PORT(0) CONTROL(QMGR)",
                           f"DEFINE CHANNEL({CHANNEL}) CHLTYPE(RCVR)", "DEFINE QLOCAL(APP.IN)")
    port = qm2.qm.state.channel_control.listeners["CHL.LISTENER"].port
    qm1 = await start_node("QM1", FileJournal(tmp_path / "qm1"), "DEFINE QLOCAL(QM2) USAGE(XMITQ)",
                           f"DEFINE CHANNEL({CHANNEL}) CHLTYPE(SDR) CONNAME('127.0.0.1({port})') XMITQ(QM2) "
                           "DISCINT(0)", "DEFINE QREMOTE(TO.APP) RNAME(APP.IN) RQMNAME(QM2) XMITQ(QM2)")
    try:
        yield qm1, qm2
    finally:
        for node in (qm1, qm2):
            await stop_node(node)


async def test_start_channel_starts_it_at_once(pair: tuple[Node, Node]) -> None:
    qm1, qm2 = pair
    await put(qm1, 5, 0)
    assert depth(qm1, "QM2") == 5 and CHANNEL not in qm1.channels.senders
    qm1.mqsc(f"START CHANNEL({CHANNEL})")
    await wait_until(lambda: depth(qm2, "APP.IN") == 5, timeout=10.0)
