"""The data source's options, parsed once from Spark's option map (keys arrive lower-cased,
values as strings) into a frozen, picklable value that travels to executors inside
partitions and writers.

Connection options follow IBM MQ: ``queueManager``, ``connName`` (``host(port)``, a
comma-separated list tried in order), ``channel``; ``queue`` names one queue or several,
comma-separated. ``topic`` (with ``subscription``, and optionally ``selector`` and
``wildcards``) reads a durable subscription instead of queues, or publishes instead of
putting (ferrymq.spark.subscribing). The reading and writing options follow the Kafka and
Pulsar sources' names (``maxMessagesPerTrigger``, ``startingPosition``, ``failOnDataLoss``...).

``queueManagers`` reads the same queues on several queue managers instead of one:
``QM1=host1(1414);QM2=host2(1414),host2b(1414)``, each entry a queue manager's name and
its connName (entries apart by ``;``, since a connName is itself a comma-separated list).
It replaces ``queueManager`` and ``connName``; writes go to one queue manager and refuse it.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from ferrymq.client.connname import parse_conn_name

DEFAULT_COMMIT_QUEUE = "FERRYMQ.SPARK.COMMITS"
MAX_CHANNEL = 20  # MQ_CHANNEL_NAME_LENGTH
MAX_QUEUE_NAME = 48  # MQ_Q_NAME_LENGTH
_QUEUE_NAME = re.compile(r"^[A-Za-z0-9._/%]{1,48}$")
PLACE_SEPARATOR = ":"  # in no MQ name: QMGR:QUEUE names a queue of a read over several queue managers

KNOWN = frozenset({
    "queuemanager", "connname", "channel", "queue", "path", "readername", "startingposition", "failondataloss",
    "maxmessagespertrigger", "maxbytespertrigger", "minpartitions", "destructive", "commitqueue", "pagemessages",
    "writemode", "topic", "subscription", "selector", "wildcards", "queuemanagers",
})
# Options that only a topic read takes: refused on queue reads and on writes.
SUBSCRIPTION_OPTIONS = ("subscription", "selector", "wildcards")
WILDCARDS = ("topic", "char")
MAX_TOPIC_STRING = 10240  # MQ_TOPIC_STR_LENGTH; also SubName's bound (MQ_SUB_NAME_LENGTH)


# Options Spark itself adds or passes through to every source and sink: not ours to refuse.
SPARK_OWN = frozenset({"checkpointlocation", "paths", "queryname"})


class OptionError(ValueError):
    """An option is missing, unknown or malformed; the message names it and what is accepted."""


@dataclass(frozen=True, slots=True)
class FerryOptions:
    queue_manager: str
    conn_name: str
    channel: str
    queues: tuple[str, ...]
    reader_name: str = "spark"
    starting_position: str = "earliest"
    fail_on_data_loss: bool = True
    max_messages_per_trigger: int = 0
    max_bytes_per_trigger: int = 0
    min_partitions: int = 1
    destructive: bool = False
    commit_queue: str = DEFAULT_COMMIT_QUEUE
    page_messages: int = 4096
    write_rows: bool = False  # writeMode=rows: the Row writer instead of the Arrow one
    topic: str = ""  # a topic string: read its subscription, or publish to it
    subscription: str = ""  # the durable subscription a topic read consumes (its SubName)
    selector: str = ""  # the subscription's selection string
    wildcards: str = "topic"  # the subscription's wildcard scheme: topic (# +) or char (* ?)
    qmgrs: tuple[tuple[str, str], ...] = ()  # queueManagers: (name, connName) of each queue manager read

    def one_per_qmgr(self) -> tuple[FerryOptions, ...]:
        """The options of each queue manager read: this one, or one per queueManagers entry."""
        if not self.qmgrs:
            return (self,)
        return tuple(dataclasses.replace(self, queue_manager=name, conn_name=conn, qmgrs=()) for name, conn in self.qmgrs)

    def place(self, qmgr_opts: FerryOptions, queue: str) -> str:
        """The key of ``queue`` of one of the queue managers read in offsets and plans:
        ``QMGR:QUEUE`` when reading several, the queue's name alone otherwise (so that the
        checkpoints of a one-queue-manager read stay as they always were)."""
        return f"{qmgr_opts.queue_manager}{PLACE_SEPARATOR}{queue}" if self.qmgrs else queue

    def places(self) -> tuple[str, ...]:
        """The keys of option queue's queues on every queue manager read."""
        return tuple(self.place(one, q) for one in self.one_per_qmgr() for q in self.queues)

    @property
    def appl_name(self) -> str:
        """The connection's application name, naming the channel too (DISPLAY CONN shows both)."""
        return f"spark/{self.channel}" if self.channel else "spark"


def _int(opts: Mapping[str, str], key: str, default: int, low: int) -> int:
    text = opts.get(key)
    if text is None or text == "":
        return default
    try:
        value = int(text)
    except ValueError:
        raise OptionError(f"option {key} must be an integer, not {text!r}") from None
    if value < low:
        raise OptionError(f"option {key} must be at least {low}, not {value}")
    return value


def _bool(opts: Mapping[str, str], key: str, default: bool) -> bool:
    text = opts.get(key)
    if text is None or text == "":
        return default
    low = text.strip().lower()
    if low in ("true", "yes", "1"):
        return True
    if low in ("false", "no", "0"):
        return False
    raise OptionError(f"option {key} must be true or false, not {text!r}")


def queue_names(text: str) -> tuple[str, ...]:
    """A comma-separated queue list, checked against MQ's queue-name characters.

    Raises:
        OptionError: an empty list or a name MQ would refuse.
    """
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if not names:
        raise OptionError("option queue names no queue")
    for n in names:
        if not _QUEUE_NAME.match(n):
            raise OptionError(f"queue name {n!r} is not a valid MQ queue name (1..{MAX_QUEUE_NAME} of A-Z a-z 0-9 . _ / %)")
    if len(set(names)) != len(names):
        raise OptionError(f"option queue names a queue twice: {text!r}")
    return names


def _target(opts: Mapping[str, str], reading: bool) -> tuple[tuple[str, ...], str]:
    """The queues and the topic string the options name, checked against each other.

    Raises:
        OptionError: both a queue and a topic; neither, for a read; the subscription
            options without a topic read (or with a write).
    """
    queue_text = opts.get("queue") or opts.get("path") or ""
    topic = opts.get("topic", "")
    if queue_text.strip() and topic:
        raise OptionError("options queue and topic exclude each other: read or write either queues or a topic")
    if topic and (not topic.strip() or len(topic) > MAX_TOPIC_STRING):
        raise OptionError(f"option topic must be a topic string of 1..{MAX_TOPIC_STRING} characters, not {topic!r}")
    given = [k for k in SUBSCRIPTION_OPTIONS if opts.get(k)]
    if given and not reading:
        raise OptionError(f"option(s) {', '.join(given)} are for reading a topic's subscription; a write publishes "
                          "to option topic (or a topic column) and takes none of them")
    if given and not topic:
        raise OptionError(f"option(s) {', '.join(given)} go with option topic (a read from a subscription); "
                          "a queue read takes none of them")
    if topic and reading and not opts.get("subscription", "").strip():
        raise OptionError("option topic needs option subscription when reading: the name of the durable "
                          "subscription the query consumes (made if it does not exist, kept between runs so that "
                          "nothing published while the query is stopped is lost)")
    queues = queue_names(queue_text) if (queue_text or (reading and not topic)) else ()
    return queues, topic


def parse_options(raw: Mapping[str, str], *, need_queue: bool = True) -> FerryOptions:
    """Validate Spark's options (case-insensitive keys); ``need_queue``: a read, which
    needs a queue or a topic (a write may take its targets from columns).

    Raises:
        OptionError: an unknown option (named, with the known ones), a missing connName or
            queue, options that exclude each other, or a malformed value.
    """
    opts = {k.lower(): v for k, v in raw.items()}
    unknown = sorted(set(opts) - KNOWN - SPARK_OWN)
    if unknown:
        raise OptionError(f"unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(KNOWN))}")
    qmgrs = _queue_managers(opts.get("queuemanagers", ""), need_queue)
    conn = opts.get("connname", "").strip()
    if qmgrs:
        given = [spelled for k, spelled in (("queuemanager", "queueManager"), ("connname", "connName"))
                 if opts.get(k, "").strip()]
        if given:
            raise OptionError(f"option queueManagers names each queue manager with its connName: leave out "
                              f"{' and '.join(given)}")
        conn = qmgrs[0][1]
    elif not conn:
        raise OptionError("option connName is required (MQ style: host(port), or a comma-separated list)")
    try:
        parse_conn_name(conn)
    except ValueError as exc:
        raise OptionError(f"option connName: {exc}") from None
    channel = opts.get("channel", "").strip()
    if len(channel) > MAX_CHANNEL:
        raise OptionError(f"option channel is at most {MAX_CHANNEL} characters, not {len(channel)}")
    queues, topic = _target(opts, need_queue)
    subscription = opts.get("subscription", "").strip()
    if len(subscription) > MAX_TOPIC_STRING:
        raise OptionError(f"option subscription is at most {MAX_TOPIC_STRING} characters")
    wildcards = (opts.get("wildcards", "").strip() or "topic").lower()
    if wildcards not in WILDCARDS:
        raise OptionError(f"option wildcards must be topic (# and + over whole levels) or char (* and ?), "
                          f"not {opts['wildcards']!r}")
    reader = opts.get("readername", "spark").strip() or "spark"
    if len(reader) > 256:
        raise OptionError("option readerName is at most 256 characters")
    start = opts.get("startingposition", "earliest").strip() or "earliest"
    if topic and start.lower() not in ("earliest", "latest"):
        raise OptionError(f"startingPosition of a topic read is earliest or latest (the subscription's queue is "
                          f"the query's own), not {start!r}")
    places = tuple(f"{name}{PLACE_SEPARATOR}{q}" for name, _ in qmgrs for q in queues) if qmgrs else queues
    starting_seqs(start, places)  # validated now, not at the first trigger
    commit_queue = opts.get("commitqueue", DEFAULT_COMMIT_QUEUE).strip()
    queue_names(commit_queue)
    return FerryOptions(
        queue_manager=qmgrs[0][0] if qmgrs else opts.get("queuemanager", "").strip(),
        conn_name=conn,
        channel=channel,
        queues=queues,
        reader_name=reader,
        starting_position=start,
        fail_on_data_loss=_bool(opts, "failondataloss", True),
        max_messages_per_trigger=_int(opts, "maxmessagespertrigger", 0, 1),
        max_bytes_per_trigger=_int(opts, "maxbytespertrigger", 0, 1),
        min_partitions=_int(opts, "minpartitions", 1, 1),
        destructive=_bool(opts, "destructive", False),
        commit_queue=commit_queue,
        page_messages=_int(opts, "pagemessages", 4096, 1),
        write_rows=_write_mode(opts.get("writemode", "arrow")),
        topic=topic,
        subscription=subscription,
        selector=opts.get("selector", "").strip(),
        wildcards=wildcards,
        qmgrs=qmgrs,
    )


def _queue_managers(text: str, reading: bool) -> tuple[tuple[str, str], ...]:
    """Option queueManagers: ``QM1=host1(1414);QM2=host2(1414),host2b(1414)``.

    Raises:
        OptionError: on a write, a malformed entry, a name twice or a bad connName.
    """
    if not text.strip():
        return ()
    if not reading:
        raise OptionError("option queueManagers is for reads: a write goes to one queue manager (give queueManager "
                          "and connName)")
    out: list[tuple[str, str]] = []
    for entry in (e.strip() for e in text.split(";")):
        name, eq, conn = entry.partition("=")
        name, conn = name.strip(), conn.strip()
        if not entry or not eq or not _QUEUE_NAME.match(name) or not conn:
            raise OptionError(f"option queueManagers takes NAME=connName entries apart by ';' "
                              f"(QM1=host1(1414);QM2=host2(1414)), not {entry!r}")
        try:
            parse_conn_name(conn)
        except ValueError as exc:
            raise OptionError(f"option queueManagers, {name}: {exc}") from None
        if any(n == name for n, _ in out):
            raise OptionError(f"option queueManagers names queue manager {name} twice")
        out.append((name, conn))
    return tuple(out)


def _write_mode(text: str) -> bool:
    mode = text.strip().lower() or "arrow"
    if mode not in ("arrow", "rows"):
        raise OptionError(f"option writeMode must be arrow or rows, not {text!r}")
    return mode == "rows"


def starting_seqs(position: str, queues: tuple[str, ...]) -> str | dict[str, int]:
    """``"earliest"``, ``"latest"``, or a JSON object giving the first sequence per queue.

    Raises:
        OptionError: anything else, or a JSON object naming a queue that is not read.
    """
    low = position.strip().lower()
    if low in ("earliest", "latest"):
        return low
    try:
        doc = json.loads(position)
    except ValueError:
        raise OptionError(f"startingPosition must be earliest, latest or JSON like {{\"Q1\": 42}}, not {position!r}") from None
    if not isinstance(doc, dict) or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in doc.values()):
        raise OptionError(f"startingPosition JSON must map queue names to sequence numbers >= 0: {position!r}")
    stray = sorted(set(doc) - set(queues))
    if stray:
        raise OptionError(f"startingPosition names queue(s) {', '.join(stray)} that option queue does not read "
                          f"(read: {', '.join(queues)})")
    return {str(k): int(v) for k, v in doc.items()}
