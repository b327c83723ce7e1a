"""The sequence-range and prepared-unit calls as mixins of the sync and async clients.

Both clients provide ``_s`` (the Session), ``_call`` and ``open``; everything else
(requests and replies) is in ferrymq.client.sequence, so the two mixins differ only by ``await``.

The queue manager answers a sequence call only on a queue this connection holds open for
what the call does, as it would a get (engine.sequence_access.require_open): input to
remove, browse to browse, inquire to read the range or the readers. These calls open the
queue for that the first time they need it (an MQOPEN checked like any other) and keep the
handle for the connection's life; a handle that no longer qualifies (the queue was
deleted and defined again) is opened afresh once.
"""

from __future__ import annotations

import contextlib
from typing import Any

from ferrymq.client import sequence as Q
from ferrymq.client.session import Session
from ferrymq.errors import MQError
from ferrymq.mq import constants as C

INQUIRE, BROWSE, INPUT = C.MQOO_INQUIRE, C.MQOO_BROWSE, C.MQOO_INPUT_SHARED
_NOT_OPEN = {C.MQRC_NOT_OPEN_FOR_INQUIRE, C.MQRC_NOT_OPEN_FOR_BROWSE, C.MQRC_NOT_OPEN_FOR_INPUT}


def _opened(client: Any) -> dict[tuple[str, int], Any]:
    """The handles the sequence calls opened on ``client``: (queue, option) -> its queue object."""
    opened: dict[tuple[str, int], Any] | None = getattr(client, "_seq_opened", None)
    if opened is None:
        opened = client._seq_opened = {}
    return opened


class SequenceCalls:
    _s: Session

    def _call(self, ev: Any) -> Any:  # provided by the client
        raise NotImplementedError

    def open(self, name: str, *, options: int | None = None) -> Any:  # provided by the client
        raise NotImplementedError

    def _seq_call(self, queue: str, option: int, build: Any) -> Any:
        """``build()``'s request answered, on ``queue`` opened for ``option`` by this client."""
        opened = _opened(self)
        key = (queue, option)
        for attempt in (0, 1):
            if key not in opened:
                opened[key] = self.open(queue, options=option)
            reply = self._call(build())  # a failure comes back as the reply: the caller checks it
            if attempt or getattr(reply, "reason", 0) not in _NOT_OPEN:
                return reply
            stale = opened.pop(key)
            with contextlib.suppress(MQError):  # the handle is useless either way
                stale.close()
        raise AssertionError("unreachable")

    # -- sequence-range access and prepared units (see ferrymq.client.sequence) -------------
    def queue_range(self, queue: str) -> Q.QueueRange:
        """The queue's stable ``[first_seq, last_seq]`` and its depth."""
        return Q.range_result(self._seq_call(queue, INQUIRE, lambda: Q.range_request(self._s, queue)))

    def browse_range(self, queue: str, from_seq: int, to_seq: int, *, max_msgs: int = 0,
                     max_bytes: int = 0) -> list[Q.SequencedMessage]:
        """Messages with ``from_seq <= seq < to_seq`` in sequence order, left on the queue."""
        return Q.browse_result(queue, self._seq_call(queue, BROWSE, lambda: Q.browse_request(
            self._s, queue, from_seq, to_seq, max_msgs, max_bytes)))

    def browse_columns(self, queue: str, from_seq: int, to_seq: int, *, max_msgs: int = 0,
                       max_bytes: int = 0) -> Q.ColumnPage:
        """What ``browse_range`` returns, as one page of columns (ferrymq.client.sequence.ColumnPage)."""
        return Q.columns_result(queue, self._seq_call(queue, BROWSE, lambda: Q.columns_request(
            self._s, queue, from_seq, to_seq, max_msgs, max_bytes)))

    def remove_upto(self, queue: str, upto_seq: int, reader: str) -> int:
        """Remove every message with ``seq <= upto_seq`` (idempotent); records ``reader``'s position."""
        return Q.removed_result(self._seq_call(queue, INPUT, lambda: Q.remove_request(self._s, queue, upto_seq,
                                                                                      reader)))

    def reader_positions(self, queue: str) -> list[Q.ReaderPosition]:
        return Q.readers_result(self._seq_call(queue, INQUIRE, lambda: Q.readers_request(self._s, queue)))

    def prepare(self, xid: bytes) -> int:
        """Phase one: this connection's unit of work becomes in-doubt under ``xid``."""
        return Q.prepare_result(self._call(Q.prepare_request(self._s, xid)))

    def resolve(self, xid: bytes, *, commit: bool) -> bool:
        """Phase two for any in-doubt ``xid``; False when it is not in doubt (already resolved)."""
        return Q.resolve_result(self._call(Q.resolve_request(self._s, xid, commit)))

    def in_doubt(self) -> list[bytes]:
        return Q.in_doubt_result(self._call(Q.in_doubt_request(self._s)))


class AsyncSequenceCalls:
    _s: Session

    async def _call(self, ev: Any) -> Any:  # provided by the client
        raise NotImplementedError

    async def open(self, name: str, *, options: int | None = None) -> Any:  # provided by the client
        raise NotImplementedError

    async def _seq_call(self, queue: str, option: int, build: Any) -> Any:
        """``build()``'s request answered, on ``queue`` opened for ``option`` by this client."""
        opened = _opened(self)
        key = (queue, option)
        for attempt in (0, 1):
            if key not in opened:
                opened[key] = await self.open(queue, options=option)
            reply = await self._call(build())  # a failure comes back as the reply: the caller checks it
            if attempt or getattr(reply, "reason", 0) not in _NOT_OPEN:
                return reply
            stale = opened.pop(key)
            with contextlib.suppress(MQError):  # the handle is useless either way
                await stale.close()
        raise AssertionError("unreachable")

    # -- sequence-range access and prepared units (see ferrymq.client.sequence) -------------
    async def queue_range(self, queue: str) -> Q.QueueRange:
        """The queue's stable ``[first_seq, last_seq]`` and its depth."""
        return Q.range_result(await self._seq_call(queue, INQUIRE, lambda: Q.range_request(self._s, queue)))

    async def browse_range(self, queue: str, from_seq: int, to_seq: int, *, max_msgs: int = 0,
                     max_bytes: int = 0) -> list[Q.SequencedMessage]:
        """Messages with ``from_seq <= seq < to_seq`` in sequence order, left on the queue."""
        return Q.browse_result(queue, await self._seq_call(queue, BROWSE, lambda: Q.browse_request(
            self._s, queue, from_seq, to_seq, max_msgs, max_bytes)))

    async def browse_columns(self, queue: str, from_seq: int, to_seq: int, *, max_msgs: int = 0,
                       max_bytes: int = 0) -> Q.ColumnPage:
        """What ``browse_range`` returns, as one page of columns (ferrymq.client.sequence.ColumnPage)."""
        return Q.columns_result(queue, await self._seq_call(queue, BROWSE, lambda: Q.columns_request(
            self._s, queue, from_seq, to_seq, max_msgs, max_bytes)))

    async def remove_upto(self, queue: str, upto_seq: int, reader: str) -> int:
        """Remove every message with ``seq <= upto_seq`` (idempotent); records ``reader``'s position."""
        return Q.removed_result(await self._seq_call(queue, INPUT, lambda: Q.remove_request(
            self._s, queue, upto_seq, reader)))

    async def reader_positions(self, queue: str) -> list[Q.ReaderPosition]:
        return Q.readers_result(await self._seq_call(queue, INQUIRE, lambda: Q.readers_request(self._s, queue)))

    async def prepare(self, xid: bytes) -> int:
        """Phase one: this connection's unit of work becomes in-doubt under ``xid``."""
        return Q.prepare_result(await self._call(Q.prepare_request(self._s, xid)))

    async def resolve(self, xid: bytes, *, commit: bool) -> bool:
        """Phase two for any in-doubt ``xid``; False when it is not in doubt (already resolved)."""
        return Q.resolve_result(await self._call(Q.resolve_request(self._s, xid, commit)))

    async def in_doubt(self) -> list[bytes]:
        return Q.in_doubt_result(await self._call(Q.in_doubt_request(self._s)))
