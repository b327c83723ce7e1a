"""Rows to messages: how a written row's columns map back onto MQPUT (the puts
themselves, by runs of rows as columns, are in ferrymq.spark.columnar).

The columns are those a read produces (ferrymq.spark.columns): ``payload`` is required;
every other column is optional and a null means the MQMD default. ``seq`` and
``backout_count`` are the queue manager's to assign and are ignored, so a DataFrame read
from ferrymq writes back unchanged. Writing any context column (``user_identifier``,
``put_timestamp``...) puts with MQPMO_SET_ALL_CONTEXT, so all of the context is taken from
the row. Unknown columns are refused by name, never dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ferrymq.mq import constants as C
from ferrymq.spark.columns import ASSIGNED, CONTEXT, MD_FIELD, check_columns, put_fields
from ferrymq.wire.mqmd import MQMD

_BASE_MD = MQMD(version=C.MQMD_VERSION_2)
_LENGTHS = {"msg_id": 24, "correl_id": 24, "group_id": 24, "accounting_token": 32}


class PutPlan:
    """What one writer does with each row: its target queue, descriptor and options.

    Raises (constructor):
        ValueError: unknown columns (all named), no payload column, or neither a target
            queue option nor a ``queue`` column.
    """

    def __init__(self, names: Sequence[str], queue: str | None) -> None:
        check_columns(names, "cannot write to ferrymq")
        if "payload" not in names:
            raise ValueError("cannot write to ferrymq: a payload column (binary or string) is required")
        if queue is None and "queue" not in names:
            raise ValueError("cannot write to ferrymq: give the target with option queue or a queue column")
        self.queue = queue
        self.names = tuple(names)
        self.md_columns = tuple((n, MD_FIELD[n]) for n in names if n in MD_FIELD and n not in ASSIGNED)
        self.set_context = bool(CONTEXT.intersection(names))
        self.has_timestamp = "put_timestamp" in names
        self.has_format = "format" in names
        self.open_options = C.MQOO_OUTPUT | C.MQOO_FAIL_IF_QUIESCING | (C.MQOO_SET_ALL_CONTEXT if self.set_context else 0)
        self.put_options = C.MQPMO_SET_ALL_CONTEXT if self.set_context else 0

    def target(self, row: Mapping[str, Any]) -> str:
        if self.queue is not None:
            return self.queue
        name = row.get("queue")
        if not name:
            raise ValueError("cannot write to ferrymq: a row has no queue (null queue column, no queue option)")
        return str(name)

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
