"""A row is a message: the documented columns (docs/spark.md), how a browsed message
becomes column values (a whole page at a time, as Arrow arrays), and the column types.

Names follow the MQMD fields in snake_case (``ReplyToQMgr`` -> ``reply_to_qmgr``), with
``ccsid`` for CodedCharSetId and ``put_timestamp`` for PutDate + PutTime.
``queue_manager``, ``queue`` and ``seq`` say where a message was read (the queue manager
by the name it gave on connect: a read over several tells its rows apart by it), ``topic`` the topic string a publication was
published on (its MQTopicString property, ``mqps.Top``; null on a message that is no
publication), so a queue read and a topic read have the same columns. Properties are a
``map<string,string>``: Spark's Python sources cannot produce a map of variants, so every
typed value travels as text (see ``property_text``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter
from typing import Any

import pyarrow as pa

from ferrymq.client.sequence import SequencedMessage
from ferrymq.wire.mqmd import FIELD_NAMES, MQMD

# (column, Spark SQL type); the order is the schema's order.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("queue", "STRING"),
    ("seq", "BIGINT"),
    ("topic", "STRING"),
    ("msg_id", "BINARY"),
    ("correl_id", "BINARY"),
    ("group_id", "BINARY"),
    ("msg_type", "INT"),
    ("priority", "INT"),
    ("persistence", "INT"),
    ("expiry", "INT"),
    ("feedback", "INT"),
    ("report", "INT"),
    ("encoding", "INT"),
    ("ccsid", "INT"),
    ("format", "STRING"),
    ("reply_to_q", "STRING"),
    ("reply_to_qmgr", "STRING"),
    ("user_identifier", "STRING"),
    ("accounting_token", "BINARY"),
    ("appl_identity_data", "STRING"),
    ("put_appl_type", "INT"),
    ("put_appl_name", "STRING"),
    ("put_timestamp", "TIMESTAMP"),
    ("appl_origin_data", "STRING"),
    ("msg_seq_number", "INT"),
    ("offset", "INT"),
    ("msg_flags", "INT"),
    ("original_length", "INT"),
    ("backout_count", "INT"),
    ("properties", "MAP<STRING, STRING>"),
    ("payload", "BINARY"),
    # Added after the others so that the columns before it keep their places.
    ("queue_manager", "STRING"),
)
NAMES = tuple(name for name, _ in COLUMNS)
SCHEMA_DDL = ", ".join(f"`{name}` {kind}" for name, kind in COLUMNS)

# Column -> MQMD field, for every column that is one MQMD field as it stands.
MD_FIELD: dict[str, str] = {
    "msg_id": "msg_id", "correl_id": "correl_id", "group_id": "group_id", "msg_type": "msg_type",
    "priority": "priority", "persistence": "persistence", "expiry": "expiry", "feedback": "feedback",
    "report": "report", "encoding": "encoding", "ccsid": "coded_char_set_id", "format": "format",
    "reply_to_q": "reply_to_q", "reply_to_qmgr": "reply_to_q_mgr", "user_identifier": "user_identifier",
    "accounting_token": "accounting_token", "appl_identity_data": "appl_identity_data",
    "put_appl_type": "put_appl_type", "put_appl_name": "put_appl_name", "appl_origin_data": "appl_origin_data",
    "msg_seq_number": "msg_seq_number", "offset": "offset", "msg_flags": "msg_flags",
    "original_length": "original_length", "backout_count": "backout_count",
}
# Context columns: writing any of them puts with MQPMO_SET_ALL_CONTEXT.
CONTEXT = frozenset({"user_identifier", "accounting_token", "appl_identity_data", "put_appl_type", "put_appl_name",
                     "put_timestamp", "appl_origin_data"})
# Columns a put cannot set: the queue manager assigns them (accepted on write, so that a
# DataFrame read from ferrymq can be written back as it is, and ignored).
ASSIGNED = frozenset({"queue_manager", "seq", "backout_count"})

TOPIC_PROPERTY = "mqps.Top"  # MQTopicString: the queue manager sets it on every copy of a publication

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_day_micros: dict[str, int] = {}


def put_micros(put_date: str, put_time: str) -> int | None:
    """PutDate ``YYYYMMDD`` + PutTime ``HHMMSSTH`` (GMT) as microseconds since the epoch;
    None when the message carries no (or no readable) put time."""
    # ASCII digits only: str.isdigit also takes Latin-1's superscripts, which int() refuses.
    if len(put_date) != 8 or len(put_time) != 8 or not (put_date + put_time).isascii() \
            or not (put_date.isdigit() and put_time.isdigit()):
        return None
    day = _day_micros.get(put_date)
    if day is None:
        try:
            when = dt.datetime(int(put_date[:4]), int(put_date[4:6]), int(put_date[6:]), tzinfo=dt.UTC)
        except ValueError:
            return None
        day = (when - _EPOCH) // dt.timedelta(microseconds=1)
        if len(_day_micros) < 4096:
            _day_micros[put_date] = day
    hh, mm, ss, th = int(put_time[:2]), int(put_time[2:4]), int(put_time[4:6]), int(put_time[6:])
    return day + ((hh * 60 + mm) * 60 + ss) * 1_000_000 + th * 10_000


def put_fields(when: dt.datetime | None) -> tuple[str, str]:
    """A timestamp as MQ's PutDate and PutTime (GMT, to the hundredth of a second); a naive
    datetime is local time, as Spark hands timestamps to row writers."""
    if when is None:
        return "", ""
    utc = when.astimezone(dt.UTC)
    return utc.strftime("%Y%m%d"), utc.strftime("%H%M%S") + f"{utc.microsecond // 10_000:02d}"


def property_text(value: object) -> str | None:
    """A typed property value as map text: booleans as true/false, byte strings as hex."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    return str(value)


def topic_text(props: Mapping[str, object] | None) -> str | None:
    """The topic string a publication carries (MQTopicString), None on other messages."""
    value = props.get(TOPIC_PROPERTY) if props else None
    return None if value is None else str(value)


def _props(m: SequencedMessage) -> list[tuple[str, str | None]]:
    return [(k, property_text(v)) for k, v in m.properties.items()]


# Per-message columns; the MQMD columns are read field by field from the descriptors.
_MD_INDEX = {name: field for name, field in MD_FIELD.items() if field in FIELD_NAMES}
_FROM_MESSAGE: dict[str, Callable[[SequencedMessage], Any]] = {
    "queue": lambda m: m.queue,
    "seq": lambda m: m.seq,
    "topic": lambda m: topic_text(m.properties),
    "properties": _props,
    "payload": lambda m: m.data,
}
KNOWN = frozenset(_MD_INDEX) | frozenset(_FROM_MESSAGE) | {"put_timestamp", "queue_manager"}
assert frozenset(NAMES) == KNOWN


def check_columns(names: Sequence[str], what: str) -> None:
    """Refuse columns the data source does not know, naming them.

    Raises:
        ValueError: with every unknown column and the known ones.
    """
    unknown = [n for n in names if n not in KNOWN]
    if unknown:
        raise ValueError(f"{what}: unknown column(s) {', '.join(unknown)}; ferrymq columns are {', '.join(NAMES)}")


def record_batch(messages: Sequence[SequencedMessage], schema: pa.Schema, qmgr: str = "") -> pa.RecordBatch:
    """One Arrow record batch of ``messages`` in exactly ``schema`` (Spark compares it field
    by field: the types come from the schema, never inferred); ``qmgr``: the name of the
    queue manager they were read from."""
    mds: list[MQMD] = [m.md for m in messages]
    arrays = []
    for f in schema:
        if f.name in _MD_INDEX:
            values: list[Any] = list(map(attrgetter(_MD_INDEX[f.name]), mds))
        elif f.name == "put_timestamp":
            # Put times repeat within a page (hundredths of a second): convert each once.
            seen: dict[tuple[str, str], int | None] = {}
            values = []
            for md in mds:
                key = (md.put_date, md.put_time)
                v = seen.get(key, -1)
                if v == -1:
                    v = seen[key] = put_micros(*key)
                values.append(v)
        elif f.name == "queue_manager":
            values = [qmgr] * len(messages)
        else:
            values = list(map(_FROM_MESSAGE[f.name], messages))
        arrays.append(pa.array(values, type=f.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
