"""The sequence-range and prepared-unit calls as mixins of the sync and async clients.

Both clients provide ``_s`` (the Session) and ``_call``; everything else (requests and
replies) is in ferrymq.client.sequence, so the two mixins differ only by ``await``.
"""

from __future__ import annotations

from typing import Any

from ferrymq.client import sequence as Q
from ferrymq.client.session import Session


class SequenceCalls:
    _s: Session

    def _call(self, ev: Any) -> Any:  # provided by the client
        raise NotImplementedError

    # -- sequence-range access and prepared units (see ferrymq.client.sequence) -------------
    def queue_range(self, queue: str) -> Q.QueueRange:
        """The queue's stable ``[first_seq, last_seq]`` and its depth."""
        return Q.range_result(self._call(Q.range_request(self._s, queue)))

    def browse_range(self, queue: str, from_seq: int, to_seq: int, *, max_msgs: int = 0,
                     max_bytes: int = 0) -> list[Q.SequencedMessage]:
        """Messages with ``from_seq <= seq < to_seq`` in sequence order, left on the queue."""
        ev = Q.browse_request(self._s, queue, from_seq, to_seq, max_msgs, max_bytes)
        return Q.browse_result(queue, self._call(ev))

    def browse_columns(self, queue: str, from_seq: int, to_seq: int, *, max_msgs: int = 0,
                       max_bytes: int = 0) -> Q.ColumnPage:
        """What ``browse_range`` returns, as one page of columns (ferrymq.client.sequence.ColumnPage)."""
        ev = Q.columns_request(self._s, queue, from_seq, to_seq, max_msgs, max_bytes)
        return Q.columns_result(queue, self._call(ev))

    def remove_upto(self, queue: str, upto_seq: int, reader: str) -> int:
        """Remove every message with ``seq <= upto_seq`` (idempotent); records ``reader``'s position."""
        return Q.removed_result(self._call(Q.remove_request(self._s, queue, upto_seq, reader)))

    def reader_positions(self, queue: str) -> list[Q.ReaderPosition]:
        return Q.readers_result(self._call(Q.readers_request(self._s, queue)))

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

    # -- sequence-range access and prepared units (see ferrymq.client.sequence) -------------
    async def queue_range(self, queue: str) -> Q.QueueRange:
        """The queue's stable ``[first_seq, last_seq]`` and its depth."""
        return Q.range_result(await self._call(Q.range_request(self._s, queue)))

    async def browse_range(self, queue: str, from_seq: int, to_seq: int, *, max_msgs: int = 0,
                     max_bytes: int = 0) -> list[Q.SequencedMessage]:
        """Messages with ``from_seq <= seq < to_seq`` in sequence order, left on the queue."""
        ev = Q.browse_request(self._s, queue, from_seq, to_seq, max_msgs, max_bytes)
        return Q.browse_result(queue, await self._call(ev))

    async def browse_columns(self, queue: str, from_seq: int, to_seq: int, *, max_msgs: int = 0,
                       max_bytes: int = 0) -> Q.ColumnPage:
        """What ``browse_range`` returns, as one page of columns (ferrymq.client.sequence.ColumnPage)."""
        ev = Q.columns_request(self._s, queue, from_seq, to_seq, max_msgs, max_bytes)
        return Q.columns_result(queue, await self._call(ev))

    async def remove_upto(self, queue: str, upto_seq: int, reader: str) -> int:
        """Remove every message with ``seq <= upto_seq`` (idempotent); records ``reader``'s position."""
        return Q.removed_result(await self._call(Q.remove_request(self._s, queue, upto_seq, reader)))

    async def reader_positions(self, queue: str) -> list[Q.ReaderPosition]:
        return Q.readers_result(await self._call(Q.readers_request(self._s, queue)))

    async def prepare(self, xid: bytes) -> int:
        """Phase one: this connection's unit of work becomes in-doubt under ``xid``."""
        return Q.prepare_result(await self._call(Q.prepare_request(self._s, xid)))

    async def resolve(self, xid: bytes, *, commit: bool) -> bool:
        """Phase two for any in-doubt ``xid``; False when it is not in doubt (already resolved)."""
        return Q.resolve_result(await self._call(Q.resolve_request(self._s, xid, commit)))

    async def in_doubt(self) -> list[bytes]:
        return Q.in_doubt_result(await self._call(Q.in_doubt_request(self._s)))
