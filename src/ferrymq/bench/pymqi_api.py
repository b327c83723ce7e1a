"""ferrymq through its pymqi API (``ferrymq.pymqi``), programs written the way pymqi users
write them, on the ferrymq contender's queue manager (the same server, the same sitting):

- producers put with MQPMO_ASYNC_RESPONSE and MQPMO_NEW_MSG_ID and check MQSTAT at the end
  (``QueueManager.stat``); persistent messages under syncpoint, committed every 100 (or
  every ``--uow``);
- consumers open the queue with MQOO_READ_AHEAD and get with MQGMO_WAIT and a fresh MD per
  get: non-persistent ones outside syncpoint, persistent ones under syncpoint, committing
  every 100 (or ``--uow``);
- request/reply: ``put`` of the request (MQPMO_ASYNC_RESPONSE), then a ``get`` matching
  its MsgId as CorrelId; the responder answers with an asynchronous ``put``.
"""

from __future__ import annotations

import os
from typing import Any

from ferrymq.bench.contender import HOST, PERSISTENT, REQUEST_REPLY, TRANSIENT, Contender, Target, record_trips
from ferrymq.bench.ferry import CHECK_EVERY, QMGR, Ferrymq
from ferrymq.bench.link import POLL, Clock, Link, Tally
from ferrymq.bench.model import Flow, RoundTrips

UOW = 100  # a persistent program's unit of work, when the run sets none


def _connect(port: int) -> Any:
    import ferrymq.pymqi as pymqi

    return pymqi.connect(QMGR, "DEV.APP.SVRCONN", f"{HOST}({port})")


class FerrymqPymqi(Contender):
    name = "ferrymq-pymqi"
    system = "ferrymq"
    client = "ferrymq.pymqi: MQPMO_ASYNC_RESPONSE puts; MQOO_READ_AHEAD gets, or under syncpoint (commit per 100)"
    kinds = frozenset({TRANSIENT, PERSISTENT, REQUEST_REPLY})
    units_of_work = True
    guarantees = {  # noqa: RUF012
        TRANSIENT: "non-persistent MQ messages: lost if the queue manager stops",
        PERSISTENT: "persistent: fdatasync'd at each commit of 100 puts and of 100 gets",
        REQUEST_REPLY: "non-persistent request and reply, reply matched by CorrelId",
    }

    def __init__(self, server: Ferrymq) -> None:
        self.server = server  # the ferrymq contender's queue manager

    def unavailable(self) -> str | None:
        return None

    def start(self, ctx: Any) -> None:
        self.server.start(ctx)
        self.port = self.server.port

    def stop(self) -> None:
        self.server.stop()

    def stats(self) -> dict[str, float]:
        return self.server.stats()

    def prepare(self, run_tag: str, persistent: bool) -> Target:
        return self.server.prepare(run_tag, persistent)

    def discard(self, target: Target) -> None:
        self.server.discard(target)

    # -- child processes ---------------------------------------------------------------------

    def produce(self, link: Link, target: Target, flow: Flow, index: int) -> None:
        import ferrymq.pymqi as pymqi
        from ferrymq.pymqi import CMQC

        n = flow.share(index)
        body = os.urandom(flow.size)
        uow = flow.uow or (UOW if flow.persistent else 0)
        qmgr = _connect(target.port)
        q = pymqi.Queue(qmgr, target.dest, CMQC.MQOO_OUTPUT)
        md = pymqi.MD(Persistence=CMQC.MQPER_PERSISTENT if flow.persistent else CMQC.MQPER_NOT_PERSISTENT)
        pmo = pymqi.PMO(Options=CMQC.MQPMO_NEW_MSG_ID | CMQC.MQPMO_FAIL_IF_QUIESCING
                        | (CMQC.MQPMO_ASYNC_RESPONSE if flow.async_put else CMQC.MQPMO_SYNC_RESPONSE)
                        | (CMQC.MQPMO_SYNCPOINT if uow else CMQC.MQPMO_NO_SYNCPOINT))
        link.ready("producer")
        link.wait_go()
        clock = Clock()
        sent = 0
        step = uow or CHECK_EVERY
        while sent < n and not link.late():
            k = min(step, n - sent)
            for _ in range(k):
                q.put(body, md, pmo)
            if uow:
                qmgr.commit()
            sent += k
        sts = qmgr.stat()
        if sts.PutFailureCount:
            raise RuntimeError(f"{sts.PutFailureCount} asynchronous puts failed, the first with {sts.Reason}")
        q.close()
        qmgr.disconnect()
        link.reports.put(clock.report("producer", sent))

    def consume(self, link: Link, target: Target, flow: Flow) -> None:
        import ferrymq.pymqi as pymqi
        from ferrymq.pymqi import CMQC

        tally = Tally(link, flow.count, flow.consumers)
        uow = flow.uow or (UOW if flow.persistent else 0)
        qmgr = _connect(target.port)
        # MQOO_READ_AHEAD under syncpoint too: IBM's client ignores it there, ferrymq's reads
        # ahead into the unit of work (docs/pymqi.md)
        q = pymqi.Queue(qmgr, target.dest, CMQC.MQOO_INPUT_SHARED | CMQC.MQOO_READ_AHEAD)
        gmo = pymqi.GMO(Options=CMQC.MQGMO_WAIT | CMQC.MQGMO_FAIL_IF_QUIESCING
                        | (CMQC.MQGMO_SYNCPOINT if uow else CMQC.MQGMO_NO_SYNCPOINT), WaitInterval=int(POLL * 1000))
        link.ready("consumer")
        link.wait_go()
        clock = Clock()
        pending = 0
        while True:
            try:
                q.get(None, pymqi.MD(), gmo)
            except pymqi.MQMIError as exc:
                if exc.reason != CMQC.MQRC_NO_MSG_AVAILABLE:
                    raise
                if pending:
                    qmgr.commit()
                    pending = 0
                if tally.idle():
                    break
                continue
            if uow:
                pending += 1
                if pending >= uow:
                    qmgr.commit()
                    pending = 0
            if tally.add():
                break
        if pending:
            qmgr.commit()
        q.close()
        qmgr.disconnect()
        link.reports.put(tally.report(clock.cpu()))

    def respond(self, link: Link, target: Target, trips: RoundTrips) -> None:
        import ferrymq.pymqi as pymqi
        from ferrymq.pymqi import CMQC

        qmgr = _connect(target.port)
        requests = pymqi.Queue(qmgr, target.dest, CMQC.MQOO_INPUT_SHARED)
        replies = pymqi.Queue(qmgr, target.dest + ".R", CMQC.MQOO_OUTPUT)
        gmo = pymqi.GMO(Options=CMQC.MQGMO_WAIT | CMQC.MQGMO_NO_SYNCPOINT, WaitInterval=int(POLL * 1000))
        pmo = pymqi.PMO(Options=CMQC.MQPMO_ASYNC_RESPONSE | CMQC.MQPMO_NO_SYNCPOINT | CMQC.MQPMO_NEW_MSG_ID)
        link.ready("responder")
        answered = 0
        while answered < trips.count + trips.warmup and not link.late():
            md = pymqi.MD()
            try:
                data = requests.get(None, md, gmo)
            except pymqi.MQMIError as exc:
                if exc.reason != CMQC.MQRC_NO_MSG_AVAILABLE:
                    raise
                continue
            replies.put(data, pymqi.MD(MsgType=CMQC.MQMT_REPLY, CorrelId=md.MsgId), pmo)
            answered += 1
        qmgr.stat()
        qmgr.disconnect()

    def request(self, link: Link, target: Target, trips: RoundTrips) -> None:
        import ferrymq.pymqi as pymqi
        from ferrymq.pymqi import CMQC

        body = os.urandom(trips.size)
        qmgr = _connect(target.port)
        requests = pymqi.Queue(qmgr, target.dest, CMQC.MQOO_OUTPUT)
        replies = pymqi.Queue(qmgr, target.dest + ".R", CMQC.MQOO_INPUT_SHARED)
        reply_to = (target.dest + ".R").encode()
        pmo = pymqi.PMO(Options=CMQC.MQPMO_ASYNC_RESPONSE | CMQC.MQPMO_NO_SYNCPOINT | CMQC.MQPMO_NEW_MSG_ID)
        gmo = pymqi.GMO(Options=CMQC.MQGMO_WAIT | CMQC.MQGMO_NO_SYNCPOINT, WaitInterval=30_000,
                        MatchOptions=CMQC.MQMO_MATCH_CORREL_ID)

        def one() -> None:
            md = pymqi.MD(MsgType=CMQC.MQMT_REQUEST, ReplyToQ=reply_to)
            requests.put(body, md, pmo)
            replies.get(None, pymqi.MD(CorrelId=md.MsgId), gmo)

        record_trips(link, trips, one)
        qmgr.disconnect()
