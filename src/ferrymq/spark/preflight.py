"""What the driver checks before a write moves any data: the queue manager answers, the
target queue or topic of the options opens for output (with set-all-context when context
columns are written), and a streaming write's commit queue opens for the commit
protocol's browse, get and put (ferrymq.spark.commits).

Without these checks a misnamed queue would fail every task, and a missing commit queue
would fail only at the first commit, after every task had staged its unit of work. Rows
that name their own queue or topic (columns) can be checked only as they are written.
"""

from __future__ import annotations

from ferrymq.client import Client, MQError, UnknownObjectName
from ferrymq.mq import constants as C
from ferrymq.spark.puts import PutPlan

COMMIT_QUEUE_OPEN = C.MQOO_BROWSE | C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_FAIL_IF_QUIESCING


def commit_queue_missing(name: str) -> UnknownObjectName:
    """The error for a commit queue that is not defined, naming the remedies."""
    return UnknownObjectName(C.MQCC_FAILED, C.MQRC_UNKNOWN_OBJECT_NAME,
                             f"the commit queue {name} of exactly-once streaming writes is not defined: "
                             f"DEFINE QLOCAL({name}) (or name another with option commitQueue; "
                             "a queue manager defines FERRYMQ.SPARK.COMMITS itself when it starts)")


def _refused(what: str, exc: MQError) -> MQError:
    return type(exc)(exc.comp, exc.reason, f"cannot write to ferrymq: {what}: {exc.detail or exc}")


def check_write(client: Client, plan: PutPlan, commit_queue: str | None) -> None:
    """Open (and close) every object the write will use; ``commit_queue``: a streaming
    write's, None for a batch write (which needs none).

    Raises:
        MQError: with the queue manager's reason, the detail naming the option and object.
    """
    try:
        if plan.queue is not None:
            client.open(plan.queue, options=plan.open_options).close()
        elif plan.topic is not None:
            client.open_topic(plan.topic, options=plan.open_options).close()
    except MQError as exc:
        kind, name = ("queue", plan.queue) if plan.queue is not None else ("topic", plan.topic)
        raise _refused(f"option {kind} {name!r} does not open for output", exc) from None
    if commit_queue is None:
        return
    try:
        client.open(commit_queue, options=COMMIT_QUEUE_OPEN).close()
    except UnknownObjectName:
        raise commit_queue_missing(commit_queue) from None
    except MQError as exc:
        raise _refused(f"the commit queue {commit_queue} does not open for browse, get and put", exc) from None
