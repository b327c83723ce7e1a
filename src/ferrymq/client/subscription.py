"""``Subscription``: a blocking client's subscription (``Client.subscribe``) and the managed
queue its publications arrive on. ``aio_subscription`` is its asyncio twin, differing only
in the spelling of ``async``/``await`` (tests/unit/test_client_twins.py); what both do is
in ``ferrymq.client.pubsub`` and ``ferrymq.client.mqi``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import TracebackType
from typing import Protocol, TypeVar

from ferrymq.client import mqi, pubsub
from ferrymq.client import reconnect as R
from ferrymq.client.errors import ConnectionBroken, NoMessageAvailable
from ferrymq.client.message import Message
from ferrymq.client.steps import Flow
from ferrymq.mq import constants as C
from ferrymq.protocol import events as E

T = TypeVar("T")


class Subscriber(mqi.Conversation, Protocol):
    """What a subscription uses of its ``Client`` (a Protocol: the client imports this module)."""

    closed: bool

    def run(self, flow: Flow[T]) -> T: ...


class SubscriberQueue(Protocol):
    """What a subscription uses of its managed queue, a ``Queue``."""

    hobj: int
    record: R.OpenRecord

    def get(self, wait: float | None = 0.0, *, syncpoint: bool | None = None) -> Message: ...

    def close(self, options: int = C.MQCO_NONE) -> None: ...


class Subscription:
    """A subscription (MQSUB): iterate it for its publications.

    ``topic`` is the topic string subscribed to (wildcards included), ``name`` the
    subscription's name (a durable one's identity), ``queue`` the managed queue its
    publications arrive on. A reconnecting client makes it again after a reconnect: a
    durable one resumes with what was published meanwhile, a non-durable one starts anew.
    """

    def __init__(self, client: Subscriber, reply: E.SubReply, request: E.Sub, queue: SubscriberQueue) -> None:
        self.client = client
        self.hobj = reply.hsub  # the subscription's handle (an hsub), for the reconnect's bookkeeping
        self.record = pubsub.subscription_record(request)
        self.queue = queue
        self.topic = reply.res_object_string or request.object_string
        self.name = request.sub_name
        self.durable = bool(request.options & C.MQSO_DURABLE)
        self.correl_id = reply.sub_correl_id
        self.closed = False

    def get(self, wait: float | None = None, *, syncpoint: bool | None = None) -> Message:
        """The next publication; ``wait`` in seconds (None: until one arrives).

        Raises:
            NoMessageAvailable: none arrived in time (2033).
            MQError: the subscription's queue failed otherwise.
        """
        return self.queue.get(wait, syncpoint=syncpoint)

    def messages(self, wait: float | None = None) -> Iterator[Message]:
        """Publications as they arrive, until none arrives within ``wait`` seconds (None:
        for ever)."""
        while True:
            try:
                yield self.get(wait)
            except NoMessageAvailable:
                return

    def __iter__(self) -> Iterator[Message]:
        return self.messages()

    def request_publications(self) -> int:
        """MQSUBRQ: have the retained publications of the topic sent again; how many were.

        Raises:
            MQError: the queue manager refused (e.g. 2019 after a reconnect that could not
                make the subscription again).
        """
        return self.client.run(mqi.sub_request(self.client, self.hobj))

    def close(self, remove: bool | None = None) -> None:
        """MQCLOSE of the subscription, then of its queue. A non-durable subscription ends;
        a durable one is kept (to be resumed by name) unless ``remove``.

        Raises:
            MQError: the queue manager refused (e.g. 2429 MQRC_SUBSCRIPTION_IN_USE).
        """
        if self.closed or self.client.closed:
            return
        self.closed = True
        try:
            self.client.run(mqi.close(self.client, self, pubsub.close_options(self.durable, remove)))
        finally:
            self.queue.close()

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        with contextlib.suppress(ConnectionBroken):
            self.close()

    def __repr__(self) -> str:
        return f"<Subscription {self.name or self.topic!r} {'closed' if self.closed else 'open'}>"

