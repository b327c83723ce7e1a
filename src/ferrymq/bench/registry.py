"""Every contender the benchmark knows, by name, in the order they are reported, and the
entry point of a run's child processes, which look their driver up here."""

from __future__ import annotations

import traceback
from typing import Any

from ferrymq.bench.contender import Contender
from ferrymq.bench.ferry import Ferrymq
from ferrymq.bench.link import Link
from ferrymq.bench.mqtt import MosquittoQos0, MosquittoQos1
from ferrymq.bench.nats_broker import NatsCore, NatsJetStream
from ferrymq.bench.null import NullAsyncio, NullUvloop
from ferrymq.bench.pymqi_api import FerrymqPymqi
from ferrymq.bench.rabbit import RabbitAioPika, RabbitPika

_FERRYMQ = Ferrymq()
CONTENDERS: dict[str, Contender] = {c.name: c for c in (
    _FERRYMQ,
    FerrymqPymqi(_FERRYMQ),
    RabbitPika(),
    RabbitAioPika(),
    NatsCore(),
    NatsJetStream(),
    MosquittoQos0(),
    MosquittoQos1(),
    NullAsyncio(),
    NullUvloop(),
)}


def run_child(contender: str, role: str, link: Link, *args: Any) -> None:
    """Entry point of every child process: look the driver up and run one role; a failure
    is reported with its traceback instead of hanging the run."""
    try:
        getattr(CONTENDERS[contender], role)(link, *args)
    except BaseException as exc:
        link.reports.put({"role": role, "error": f"{type(exc).__name__}: {exc}",
                          "trace": traceback.format_exc(limit=6)})
        raise SystemExit(1) from None
