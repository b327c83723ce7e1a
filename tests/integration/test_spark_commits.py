"""The exactly-once commit protocol of the Spark writers (ferrymq.spark.commits) against a
real queue-manager process, crash points scripted by hand: a driver that died between its
marker and its commits, a replay of the batch, stale units of failed attempts, and a
queue-manager SIGKILL with units in doubt."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from qm_process import QueueManagerProcess

from ferrymq.client import Client, MQError, connect
from ferrymq.spark import commits
from ferrymq.spark.columnar import batches_of_rows, stage
from ferrymq.spark.puts import PutPlan

pytestmark = pytest.mark.timeout(120)
COMMITS = "FERRYMQ.SPARK.COMMITS"


@pytest.fixture
def qmp(tmp_path: Path) -> Iterator[QueueManagerProcess]:
    p = QueueManagerProcess(tmp_path / "home").start()
    p.mqsc("DEFINE QLOCAL(OUT)\n")  # the queue manager defines COMMITS itself
    yield p
    p.kill()


def _stage(c: Client, batch: int, part: int, rows: list[bytes]) -> bytes:
    xid = commits.task_xid("query-1", batch, part, 0)
    # Persistent: a unit of non-persistent messages does not outlive its queue manager (as in MQ).
    names = ["payload", "persistence"]
    stage(c, PutPlan(names, "OUT"), batches_of_rows(names, [{"payload": r, "persistence": 1} for r in rows]), xid)
    return xid


def _out(c: Client) -> list[bytes]:
    with c.open("OUT") as q:
        return sorted(m.data for m in q.browse())


def test_a_replayed_batch_finishes_the_first_commit_and_drops_its_duplicates(qmp: QueueManagerProcess) -> None:
    with connect("QM1", qmp.conn_name) as c:
        first = [_stage(c, 5, 0, [b"a", b"b"]), _stage(c, 5, 1, [b"c"])]
        assert _out(c) == []  # staged: nothing visible
        # The driver recorded its marker and committed one unit, then died.
        with c.open(COMMITS) as q:
            marker = {"batch": 5, "scope": "query-1", "xids": [x.hex() for x in first]}
            q.put(json.dumps(marker).encode(), persistent=True)
        assert c.resolve(first[0], commit=True)
    qmp.kill()
    qmp.start()
    with connect("QM1", qmp.conn_name) as c:
        assert sorted(c.in_doubt()) == [first[1]]  # survived the restart
        # Spark replays batch 5: new tasks stage the same rows again, the driver commits.
        replay = [_stage(c, 5, 0, [b"a", b"b"]), _stage(c, 5, 1, [b"c"])]
        out = commits.commit_batch(c, COMMITS, "query-1", 5, replay)
        assert (out.replayed, out.committed, out.backed_out) == (True, 1, 2)
        assert _out(c) == [b"a", b"b", b"c"]
        assert c.in_doubt() == []
        # The next batch, with a unit a failed attempt left behind: committed once, the stray backed out.
        stray = _stage(c, 6, 0, [b"stray"])
        good = _stage(c, 6, 0, [b"d"])
        out = commits.commit_batch(c, COMMITS, "query-1", 6, [good])
        assert (out.replayed, out.committed, out.backed_out) == (False, 1, 1)
        assert stray not in c.in_doubt() and _out(c) == [b"a", b"b", b"c", b"d"]
        with c.open(COMMITS) as q:
            assert len(list(q.browse())) == 1  # batch 5's marker is gone, 6's kept until 7 commits
        # Committing batch 6 again (Spark replays it after a crash before its commit log) does nothing more.
        again = _stage(c, 6, 0, [b"d"])
        assert commits.commit_batch(c, COMMITS, "query-1", 6, [again]).replayed
        assert _out(c) == [b"a", b"b", b"c", b"d"]


def test_abort_backs_out_and_a_batch_job_commits_once(qmp: QueueManagerProcess) -> None:
    with connect("QM1", qmp.conn_name) as c:
        xs = [_stage(c, 9, p, [b"x%d" % p]) for p in range(3)]
        assert commits.abort_batch(c, COMMITS, "query-1", 9, xs[:2]) == 3  # the unit no task reported too
        assert c.in_doubt() == []
        late = _stage(c, 9, 3, [b"late"])  # a task that prepared after the abort ran
        assert c.in_doubt() == [late]  # the next commit settles it
        assert commits.commit_batch(c, COMMITS, "query-1", 10, []).backed_out == 1
        assert c.in_doubt() == [] and _out(c) == []
        job = [commits.task_xid("job1", 0, p, 0) for p in range(2)]
        for p, x in enumerate(job):
            stage(c, PutPlan(["payload"], "OUT"), batches_of_rows(["payload"], [{"payload": b"j%d" % p}]), x)
        assert commits.commit_job(c, "job1", job) == 2
        assert commits.commit_job(c, "job1", job) == 0
        assert _out(c) == [b"j0", b"j1"]


def test_a_missing_commit_queue_is_named_with_its_definition(qmp: QueueManagerProcess) -> None:
    with connect("QM1", qmp.conn_name) as c:
        x = _stage(c, 1, 0, [b"z"])
        with pytest.raises(MQError, match=r"DEFINE QLOCAL\(NO.SUCH.COMMITS\)"):
            commits.commit_batch(c, "NO.SUCH.COMMITS", "query-1", 1, [x])
        assert c.in_doubt() == [x]  # nothing was decided
        c.resolve(x, commit=False)


def test_abort_backs_out_without_the_commit_queue(qmp: QueueManagerProcess) -> None:
    # Abort used to browse the commit queue first and failed with 2085 when it was missing,
    # leaving the staged units in doubt: counted in the queue's depth, invisible to gets.
    with connect("QM1", qmp.conn_name) as c:
        xs = [_stage(c, 3, p, [b"y%d" % p]) for p in range(2)]
        assert commits.abort_batch(c, "NO.SUCH.COMMITS", "query-1", 3, xs[:1]) == 2
        assert c.in_doubt() == [] and c.queue_range("OUT").depth == 0
