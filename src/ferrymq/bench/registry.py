"""Every contender the benchmark knows, by name, in the order they are reported."""

from __future__ import annotations

from ferrymq.bench.contender import Contender
from ferrymq.bench.ferry import Ferrymq
from ferrymq.bench.mqtt import MosquittoQos0, MosquittoQos1
from ferrymq.bench.nats_broker import NatsCore, NatsJetStream
from ferrymq.bench.null import NullAsyncio, NullUvloop
from ferrymq.bench.rabbit import RabbitAioPika, RabbitPika

CONTENDERS: dict[str, Contender] = {c.name: c for c in (
    Ferrymq(),
    RabbitPika(),
    RabbitAioPika(),
    NatsCore(),
    NatsJetStream(),
    MosquittoQos0(),
    MosquittoQos1(),
    NullAsyncio(),
    NullUvloop(),
)}
