"""Retained publications: the latest publication put with MQPMO_RETAIN, per topic string.

A new subscription receives the retained publications its topic matches (unless it asked
for new publications only, or for publications on request, which MQSUBRQ sends); CLEAR
TOPICSTR drops one. A persistent one is journaled (kind ``KIND_RETAINED``: the topic
string's length and bytes, then a message record as engine.message lays it out) and
survives restarts; a non-persistent one lives in memory.

Under syncpoint the retained publication changes when the unit commits: its record is
added in the unit's transaction, and the swap in memory (and the deletion of the record it
replaces, an immediate journal delete once the commit is written) is an after-commit action
of the unit. A crash between the two leaves two records for one topic string; recovery
keeps the later one (records load in the order they became live) and deletes the other.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Callable
from dataclasses import dataclass

from ferrymq.engine.message import Message, decode_message
from ferrymq.engine.session import UnitOfWork
from ferrymq.engine.staging import Staging
from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.properties.model import PropertySet
from ferrymq.wire.mqmd import MQMD

log = logging.getLogger("ferrymq.engine")

KIND_RETAINED = 8  # journal record kind: one retained publication
_TOPIC_LEN = struct.Struct("<I")


@dataclass(slots=True, eq=False)
class Retained:
    """One retained publication: the publication as put (its stored descriptor, data and
    properties) and its journal record (0: none, it is not persistent)."""

    topic: str
    md: MQMD
    data: bytes
    properties: PropertySet | None
    put_at: float
    record_id: int = 0

    @property
    def persistent(self) -> bool:
        return self.md.persistence == C.MQPER_PERSISTENT

    def encode(self) -> tuple[bytes, ...]:
        name = self.topic.encode("utf-8", "surrogatepass")
        msg = Message("", 0, self.md, self.data, self.put_at, False)
        msg.properties = self.properties
        return (_TOPIC_LEN.pack(len(name)), name, *msg.record_parts())


def decode_retained(payload: bytes) -> Retained:
    """A retained publication from its record.

    Raises:
        DecodeError: not a retained-publication record.
    """
    if len(payload) < _TOPIC_LEN.size:
        raise DecodeError("retained record", 0, "shorter than its header")
    (n,) = _TOPIC_LEN.unpack_from(payload, 0)
    start = _TOPIC_LEN.size + n
    if start > len(payload):
        raise DecodeError("retained record", 0, "topic length exceeds the record")
    topic = payload[_TOPIC_LEN.size:start].decode("utf-8", "surrogatepass")
    msg = decode_message(payload[start:], {})
    return Retained(topic, msg.md, msg.data, msg.properties, msg.put_at)


class RetainedStore:
    """The retained publications of one queue manager (see the module docstring)."""

    def __init__(self, staging: Staging) -> None:
        self.staging = staging
        self.journal = staging.journal
        self.by_topic: dict[str, Retained] = {}

    def __len__(self) -> int:
        return len(self.by_topic)

    def get(self, topic: str) -> Retained | None:
        return self.by_topic.get(topic)

    def keep(self, pub: Retained, uow: UnitOfWork | None) -> None:
        """``pub`` becomes its topic's retained publication: now, or when ``uow`` commits."""
        if pub.persistent:
            pub.record_id = self.staging.new_record_id()
            self.journal.add(pub.record_id, KIND_RETAINED, pub.encode(), uow.txid if uow is not None else 0)
            if uow is not None:
                uow.journaled = True
            else:
                self.staging.need_sync()
        if uow is None:
            self._swap(pub)
            return
        uow.after_commit.append(lambda: self._swap(pub))
        if pub.record_id:
            uow.after_backout.append(lambda: setattr(pub, "record_id", 0))

    def _swap(self, pub: Retained) -> None:
        old = self.by_topic.get(pub.topic)
        self.by_topic[pub.topic] = pub
        if old is not None and old.record_id:
            self.journal.delete(old.record_id)
            self.staging.need_sync()

    def clear(self, topic: str) -> bool:
        """CLEAR TOPICSTR: forget ``topic``'s retained publication; False when none."""
        old = self.by_topic.pop(topic, None)
        if old is None:
            return False
        if old.record_id:
            self.journal.delete(old.record_id)
            self.staging.need_sync()
        return True

    def matching(self, accept: Callable[[str], bool]) -> list[Retained]:
        """The retained publications whose topic string ``accept`` takes, in topic order."""
        return [self.by_topic[t] for t in sorted(self.by_topic) if accept(t)]

    def recover(self, record_id: int, payload: bytes) -> None:
        """A retained-publication record read at restart."""
        try:
            pub = decode_retained(payload)
        except DecodeError as exc:
            log.error("event=unreadable_retained record_id=%d error=%s", record_id, exc)
            return
        pub.record_id = record_id
        old = self.by_topic.get(pub.topic)
        if old is not None and old.record_id:  # a crash between a commit and its delete
            self.journal.delete(old.record_id)
        self.by_topic[pub.topic] = pub
