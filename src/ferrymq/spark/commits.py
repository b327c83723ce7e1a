"""Exactly-once writes: executors stage, the driver commits once per (scope, batch).

Each write task puts its rows in a unit of work and prepares it under its own XID
(``task_xid``: scope, batch, partition, attempt and a random tail, so a retried or
speculative attempt never collides with an earlier one). Nothing is visible yet. The
driver then commits the batch (``commit_batch``):

1. If the commit queue holds a marker for (scope, batch), an earlier run got this far
   and its XIDs are the batch: they are committed (those already committed answer "not
   in doubt", harmlessly) and this run's staged units are duplicates, backed out.
2. Otherwise the driver first puts a marker listing this run's XIDs (persistent, outside
   any unit of work, so it is on disk before anything becomes visible), then commits
   them. A crash in between leaves the marker; the replay of the batch takes step 1.

Every other unit this scope left in doubt for this batch or an earlier one (a failed
task attempt, a driver that died before its marker) is backed out, and markers of
earlier batches are removed: Spark replays only its last uncommitted batch, and a later
batch is committed only after the earlier one is in Spark's commit log.

The scope is Spark's query id for a streaming query (stable across restarts from a
checkpoint) and a random job id for a batch write.
"""

from __future__ import annotations

import contextlib
import json
import logging
import uuid
from collections.abc import Iterable
from dataclasses import dataclass

from ferrymq.client import Client, NoMessageAvailable, UnknownObjectName
from ferrymq.mq import constants as C
from ferrymq.spark.preflight import commit_queue_missing

log = logging.getLogger("ferrymq.spark")

XID_PREFIX = "fsp1"


@dataclass(frozen=True, slots=True)
class XidParts:
    scope: str
    batch: int
    tail: str  # the writer's instance id: tells the driver which units its own tasks staged


def task_xid(scope: str, batch: int, partition: int, attempt: int, tail: str | None = None) -> bytes:
    """``tail``: the writer instance's id (random when not given); unique per run."""
    if ":" in scope:
        raise ValueError(f"a commit scope has no ':' ({scope!r})")
    return f"{XID_PREFIX}:{scope}:{batch}:{partition}:{attempt}:{tail or uuid.uuid4().hex[:12]}".encode()


def scope_of_writer(client: Client, tail: str) -> str | None:
    """The scope of the in-doubt units a writer instance's tasks staged, if any is in doubt
    (how a driver whose tasks all failed to report back finds what they left)."""
    for xid in client.in_doubt():
        parts = parse_xid(xid)
        if parts is not None and parts.tail == tail:
            return parts.scope
    return None


def parse_xid(xid: bytes) -> XidParts | None:
    """The scope and batch of a data-source XID; None for anyone else's."""
    parts = xid.decode("utf-8", "replace").split(":")
    if len(parts) != 6 or parts[0] != XID_PREFIX:
        return None
    try:
        return XidParts(parts[1], int(parts[2]), parts[5])
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class Outcome:
    committed: int  # units committed now
    replayed: bool  # the batch had been committed (in part) by an earlier run
    backed_out: int  # stale or duplicate units backed out


def _markers(client: Client, commit_queue: str, scope: str,
             missing_ok: bool = False) -> dict[int, tuple[bytes, list[bytes]]]:
    """batch -> (marker MsgId, XIDs) for this scope's markers on the commit queue.
    ``missing_ok``: a commit queue that is not defined holds no marker (abort's view)."""
    out: dict[int, tuple[bytes, list[bytes]]] = {}
    try:
        q = client.open(commit_queue, options=C.MQOO_BROWSE | C.MQOO_FAIL_IF_QUIESCING)
    except UnknownObjectName:
        if missing_ok:
            return out
        raise commit_queue_missing(commit_queue) from None
    with q:
        for msg in q.browse():
            try:
                doc = json.loads(msg.data)
                if doc.get("scope") != scope:
                    continue
                out[int(doc["batch"])] = (msg.msg_id, [bytes.fromhex(x) for x in doc["xids"]])
            except (ValueError, KeyError, TypeError, AttributeError):
                log.warning("event=unreadable_commit_marker queue=%s msg_id=%s", commit_queue, msg.msg_id.hex())
    return out


def _settle(client: Client, scope: str, upto_batch: int, markers: dict[int, tuple[bytes, list[bytes]]]) -> int:
    """Resolve this scope's other in-doubt units of batches <= upto_batch: commit those a
    marker lists, back out the rest. Returns how many were backed out."""
    backed_out = 0
    for xid in client.in_doubt():
        parts = parse_xid(xid)
        if parts is None or parts.scope != scope or parts.batch > upto_batch:
            continue
        listed = xid in markers.get(parts.batch, (b"", []))[1]
        client.resolve(xid, commit=listed)
        backed_out += not listed
    return backed_out


def commit_batch(client: Client, commit_queue: str, scope: str, batch: int, xids: Iterable[bytes]) -> Outcome:
    """Make the batch's staged units visible, once (see the module docstring)."""
    staged = list(xids)
    markers = _markers(client, commit_queue, scope)
    replayed = batch in markers
    if not replayed:
        doc = {"scope": scope, "batch": batch, "xids": [x.hex() for x in staged]}
        with client.open(commit_queue, options=C.MQOO_OUTPUT | C.MQOO_FAIL_IF_QUIESCING) as q:
            put = q.put(json.dumps(doc, sort_keys=True).encode(), persistent=True, syncpoint=False)
        markers[batch] = (put.msg_id, staged)
    chosen = markers[batch][1]
    committed = sum(client.resolve(x, commit=True) for x in chosen)
    backed_out = _settle(client, scope, batch, markers)
    stale = [mid for b, (mid, _) in markers.items() if b < batch]
    if stale:
        with client.open(commit_queue, options=C.MQOO_INPUT_SHARED | C.MQOO_FAIL_IF_QUIESCING) as q:
            for mid in stale:
                with contextlib.suppress(NoMessageAvailable):  # another committer removed it first
                    q.get(0.0, msg_id=mid, syncpoint=False)
    if replayed:
        log.info("event=batch_commit_replayed scope=%s batch=%d committed=%d backed_out=%d", scope, batch, committed,
                 backed_out)
    return Outcome(committed, replayed, backed_out)


def abort_batch(client: Client, commit_queue: str, scope: str, batch: int, xids: Iterable[bytes]) -> int:
    """Back out the batch's staged units (those an earlier run's marker lists excepted: the
    replay that commits the batch will commit them). Returns how many were backed out.

    Spark hands ``abort`` the messages of the tasks it heard from, which need not include
    every task that prepared a unit (a task can finish while the job is being failed), so
    every unit of this scope up to this batch that no marker lists is backed out too. A task
    that prepares after this runs leaves its unit in doubt until the query's next commit or
    abort settles it (see docs/spark.md)."""
    # Abort never depends on the commit queue: without it no marker can list a unit, so
    # everything the batch staged is backed out rather than left in doubt.
    markers = _markers(client, commit_queue, scope, missing_ok=True)
    listed = set(markers.get(batch, (b"", []))[1])
    backed_out = 0
    for x in xids:
        if x not in listed:
            backed_out += client.resolve(x, commit=False)
    backed_out += _settle(client, scope, batch, markers)
    return backed_out


def commit_job(client: Client, scope: str, xids: Iterable[bytes]) -> int:
    """A batch write's commit: its units are committed and any other unit the job left in
    doubt (a failed task attempt) is backed out. A batch job is not replayed, so it needs
    no marker. Returns how many units were committed."""
    committed = sum(client.resolve(x, commit=True) for x in xids)
    _settle(client, scope, 0, {})
    return committed


def abort_job(client: Client, scope: str, xids: Iterable[bytes]) -> int:
    """A failed batch write: back out everything the job staged."""
    for x in xids:
        client.resolve(x, commit=False)
    return _settle(client, scope, 0, {})
