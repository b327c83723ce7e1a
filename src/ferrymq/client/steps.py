"""The I/O a client flow asks for, and the loop shape that drives a flow (sans-IO).

A flow (``ferrymq.client.flows``, the MQI verbs in ``ferrymq.client.mqi``) is a generator:
it yields one of the steps below and is sent what the step produced, or has the step's
exception thrown into it at the ``yield``; its return value is the flow's result. The
blocking ``Client`` and the ``AsyncClient`` each carry out the steps their own way (a
blocking socket, an asyncio transport), so each decision of a multi-step flow is
written once. The steps:

- ``Call(ev)``: a request, as an application call makes it: in the unit of work, and
  reconnecting (when enabled) if the conversation ends on the way; sent the reply.
- ``Exchange(ev)``: a request on the current conversation only (the re-opens after a
  reconnect); sent the reply.
- ``Send(ev)``: as ``Exchange``, but an end of the conversation that a reconnect can cure
  is thrown in as ``Lost`` (the call's retry after a reconnect).
- ``Reconnect(lost)``: re-make the conversation that ``lost`` saw end (once, however many
  calls saw it); ``Pause(seconds)``, ``Redial()`` (dial and handshake; sent the new
  conversation's Session) and ``Drop()`` (close the current connection): the reconnect's
  own steps.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, TypeVar

from ferrymq.errors import MQError

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Call:
    ev: Any


@dataclass(frozen=True, slots=True)
class Exchange:
    ev: Any


@dataclass(frozen=True, slots=True)
class Send:
    ev: Any


class Lost(Exception):
    """The conversation a request was on ended for a reason a reconnect can cure.

    ``sent``: the request had left (its outcome is unknown); ``generation``: which
    conversation ended (an asyncio client's tasks share one reconnect per conversation).
    """

    def __init__(self, cause: MQError, sent: bool, generation: int = 0) -> None:
        super().__init__(cause)
        self.cause = cause
        self.sent = sent
        self.generation = generation


@dataclass(frozen=True, slots=True)
class Reconnect:
    lost: Lost


@dataclass(frozen=True, slots=True)
class Pause:
    seconds: float


@dataclass(frozen=True, slots=True)
class Redial:
    pass


@dataclass(frozen=True, slots=True)
class Drop:
    pass


Step = Call | Exchange | Send | Reconnect | Pause | Redial | Drop
Flow = Generator[Step, Any, T]


def drive(flow: Flow[T], carry_out: Callable[[Step], Any]) -> T:
    """Run ``flow`` to its end, ``carry_out`` doing each step's I/O; the flow's result, or
    its exception. (The asyncio client's ``run`` is this loop with ``await``.)"""
    outcome: Any = None
    failure: BaseException | None = None
    while True:
        try:
            step = flow.send(outcome) if failure is None else flow.throw(failure)
        except StopIteration as done:
            result: T = done.value
            return result
        outcome = failure = None
        try:
            outcome = carry_out(step)
        except BaseException as exc:  # thrown into the flow, which decides
            failure = exc
