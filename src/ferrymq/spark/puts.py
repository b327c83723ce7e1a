"""Rows to messages: how a written row's columns map back onto MQPUT (the puts
themselves, by runs of rows as columns, are in ferrymq.spark.columnar).

The columns are those a read produces (ferrymq.spark.columns): ``payload`` is required;
every other column is optional and a null means the MQMD default. ``seq`` and
``backout_count`` are the queue manager's to assign and are ignored, so a DataFrame read
from ferrymq writes back unchanged. Writing any context column (``user_identifier``,
``put_timestamp``...) puts with MQPMO_SET_ALL_CONTEXT, so all of the context is taken from
the row. Unknown columns are refused by name, never dropped.

Where a row goes: option ``queue`` or option ``topic`` (never both) sends every row
there; otherwise a row's ``topic`` column, when not null, publishes it to that topic
string, and else its ``queue`` column puts it to that queue (as Kafka's sink takes a
``topic`` column unless option ``topic`` is given).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ferrymq.mq import constants as C
from ferrymq.spark.columns import ASSIGNED, CONTEXT, MD_FIELD, check_columns, put_fields
from ferrymq.wire.mqmd import MQMD

_BASE_MD = MQMD(version=C.MQMD_VERSION_2)
_LENGTHS = {"msg_id": 24, "correl_id": 24, "group_id": 24, "accounting_token": 32}


@dataclass(frozen=True, slots=True)
class Target:
    """Where a row's message goes: queue ``name``, or topic string ``name`` (a publication)."""

    name: str
    topic: bool = False


class PutPlan:
    """What one writer does with each row: its target (queue or topic), descriptor and
    options.

    Raises (constructor):
        ValueError: unknown columns (all named), no payload column, both a queue and a
            topic option, or no target at all (no option, no ``queue`` or ``topic`` column).
    """

    def __init__(self, names: Sequence[str], queue: str | None, topic: str | None = None) -> None:
        check_columns(names, "cannot write to ferrymq")
        if "payload" not in names:
            raise ValueError("cannot write to ferrymq: a payload column (binary or string) is required")
        if queue is not None and topic is not None:
            raise ValueError("cannot write to ferrymq: options queue and topic exclude each other")
        if queue is None and topic is None and "queue" not in names and "topic" not in names:
            raise ValueError("cannot write to ferrymq: give the target with option queue or topic, "
                             "or a queue or topic column")
        self.queue = queue
        self.topic = topic
        self.names = tuple(names)
        self.md_columns = tuple((n, MD_FIELD[n]) for n in names if n in MD_FIELD and n not in ASSIGNED)
        self.set_context = bool(CONTEXT.intersection(names))
        self.has_timestamp = "put_timestamp" in names
        self.has_format = "format" in names
        self.open_options = C.MQOO_OUTPUT | C.MQOO_FAIL_IF_QUIESCING | (C.MQOO_SET_ALL_CONTEXT if self.set_context else 0)
        self.put_options = C.MQPMO_SET_ALL_CONTEXT if self.set_context else 0

    def target(self, row: Mapping[str, Any]) -> Target:
        """Raises: ValueError for a row with neither a topic nor a queue to go to."""
        if self.queue is not None:
            return Target(self.queue)
        if self.topic is not None:
            return Target(self.topic, topic=True)
        topic = row.get("topic")
        if topic:
            return Target(str(topic), topic=True)
        name = row.get("queue")
        if not name:
            raise ValueError("cannot write to ferrymq: a row has neither a topic nor a queue (null topic and queue "
                             "columns, no queue or topic option)")
        return Target(str(name))

    def descriptor(self, row: Mapping[str, Any], text_payload: bool) -> MQMD:
        changes: dict[str, Any] = {}
        for col, field in self.md_columns:
            value = row[col]
            if value is None:
                continue
            if col in _LENGTHS:
                value = bytes(value)
                if len(value) > _LENGTHS[col]:
                    raise ValueError(f"column {col} holds {len(value)} bytes; MQ allows {_LENGTHS[col]}")
                value = value.ljust(_LENGTHS[col], b"\0")
            changes[field] = value
        if self.has_timestamp:
            changes["put_date"], changes["put_time"] = put_fields(row["put_timestamp"])
        if text_payload and (not self.has_format or row["format"] is None):
            changes["format"] = C.MQFMT_STRING
            changes.setdefault("coded_char_set_id", 1208)
        return _BASE_MD.replace(**changes) if changes else _BASE_MD
