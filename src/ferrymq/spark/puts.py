"""Rows to messages: how a written row's columns map back onto MQPUT, and staging a
partition's rows in a unit of work prepared under a global transaction id (the driver
commits or backs it out; see ferrymq.spark.commits).

The columns are those a read produces (ferrymq.spark.columns): ``payload`` is required;
every other column is optional and a null means the MQMD default. ``seq`` and
``backout_count`` are the queue manager's to assign and are ignored, so a DataFrame read
from ferrymq writes back unchanged. Writing any context column (``user_identifier``,
``put_timestamp``...) puts with MQPMO_SET_ALL_CONTEXT, so all of the context is taken from
the row. Unknown columns are refused by name, never dropped.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ferrymq.client import Client, Queue
from ferrymq.mq import constants as C
from ferrymq.spark.columns import ASSIGNED, CONTEXT, MD_FIELD, check_columns, put_fields
from ferrymq.spark.options import queue_names
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


def put_rows(client: Client, plan: PutPlan, rows: Iterable[Mapping[str, Any]]) -> int:
    """Put every row under syncpoint (asynchronously: outcomes are checked with MQSTAT);
    returns how many. The caller prepares, commits or backs out the unit.

    Raises:
        ValueError: a row that cannot be a message (no payload, an identifier too long).
        MQError: a put the queue manager refused (the first such).
    """
    queues: dict[str, Queue] = {}
    count = 0
    try:
        for row in rows:
            name = plan.target(row)
            q = queues.get(name)
            if q is None:
                queue_names(name)
                q = queues[name] = client.open(name, options=plan.open_options, async_put=True)
            data = row["payload"]
            if data is None:
                raise ValueError("cannot write to ferrymq: a row has a null payload")
            text = isinstance(data, str)
            props = row.get("properties")
            md = plan.descriptor(row, text)
            # The default descriptor goes by the client's cached template (no MQMD to pack),
            # and asynchronous puts that differ only in MsgId then travel as one batch frame.
            q.put(data, md=None if md is _BASE_MD else md, properties=dict(props) if props else None,
                  syncpoint=True, options=plan.put_options)
            count += 1
        status = client.stat()
        if status.failures:
            assert status.first_error is not None
            raise status.first_error
    finally:
        for q in queues.values():
            with contextlib.suppress(Exception):
                q.close()
    return count


def stage(client: Client, plan: PutPlan, rows: Iterable[Mapping[str, Any]], xid: bytes) -> int:
    """Put the rows in a unit of work and prepare it under ``xid``: nothing is visible until
    the driver resolves ``xid``. Backs the unit out when anything fails. Returns the count."""
    try:
        count = put_rows(client, plan, rows)
        client.prepare(xid)
    except BaseException:
        with contextlib.suppress(Exception):  # the connection may be the failure; the caller drops it
            client.backout()
        raise
    return count
