"""``AsyncSubscription``: an asyncio client's subscription (``AsyncClient.subscribe``),
the twin of ``ferrymq.client.subscription`` (tests/unit/test_client_twins.py): ``async for``
its publications.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
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


class AsyncSubscriber(mqi.Conversation, Protocol):
    """What a subscription uses of its ``AsyncClient`` (a Protocol: the client imports this module)."""

    closed: bool

    async def run(self, flow: Flow[T]) -> T: ...


class AsyncSubscriberQueue(Protocol):
    """What a subscription uses of its managed queue, an ``AsyncQueue``."""

    hobj: int
    record: R.OpenRecord

    async def get(self, wait: float | None = 0.0, *, syncpoint: bool | None = None) -> Message: ...

    async def close(self, options: int = C.MQCO_NONE) -> None: ...


class AsyncSubscription:
    """A subscription (MQSUB): ``async for`` its publications; see ``Subscription``.

    ``topic`` is the topic string subscribed to (wildcards included), ``name`` the
    subscription's name (a durable one's identity), ``queue`` the managed queue its
    publications arrive on. A reconnecting client makes it again after a reconnect: a
    durable one resumes with what was published meanwhile, a non-durable one starts anew.
    """

    def __init__(self, client: AsyncSubscriber, reply: E.SubReply, request: E.Sub, queue: AsyncSubscriberQueue) -> None:
        self.client = client
        self.hobj = reply.hsub  # the subscription's handle (an hsub), for the reconnect's bookkeeping
        self.record = pubsub.subscription_record(request)
        self.queue = queue
        self.topic = reply.res_object_string or request.object_string
        self.name = request.sub_name
        self.durable = bool(request.options & C.MQSO_DURABLE)
        self.correl_id = reply.sub_correl_id
        self.closed = False

    async def get(self, wait: float | None = None, *, syncpoint: bool | None = None) -> Message:
        """The next publication; ``wait`` in seconds (None: until one arrives).

        Raises:
            NoMessageAvailable: none arrived in time (2033).
            MQError: the subscription's queue failed otherwise.
        """
        return await self.queue.get(wait, syncpoint=syncpoint)

    async def messages(self, wait: float | None = None) -> AsyncIterator[Message]:
        """Publications as they arrive, until none arrives within ``wait`` seconds (None:
        for ever)."""
        while True:
            try:
                yield await self.get(wait)
            except NoMessageAvailable:
                return

    def __aiter__(self) -> AsyncIterator[Message]:
        return self.messages()

    async def request_publications(self) -> int:
        """MQSUBRQ: have the retained publications of the topic sent again; how many were.

        Raises:
            MQError: the queue manager refused (e.g. 2019 after a reconnect that could not
                make the subscription again).
        """
        return await self.client.run(mqi.sub_request(self.client, self.hobj))

    async def close(self, remove: bool | None = None) -> None:
        """MQCLOSE of the subscription, then of its queue. A non-durable subscription ends;
        a durable one is kept (to be resumed by name) unless ``remove``.

        Raises:
            MQError: the queue manager refused (e.g. 2429 MQRC_SUBSCRIPTION_IN_USE).
        """
        if self.closed or self.client.closed:
            return
        self.closed = True
        try:
            await self.client.run(mqi.close(self.client, self, pubsub.close_options(self.durable, remove)))
        finally:
            await self.queue.close()

    async def __aenter__(self) -> AsyncSubscription:
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        with contextlib.suppress(ConnectionBroken):
            await self.close()

    def __repr__(self) -> str:
        return f"<AsyncSubscription {self.name or self.topic!r} {'closed' if self.closed else 'open'}>"

