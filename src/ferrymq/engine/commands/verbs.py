"""CREATE, COPY, CHANGE and DELETE of a kind of named definition whose registry takes
attributes only (TOPIC, PROCESS): the four handlers every such kind's PCF commands share.
A kind differs by its registry, its parameters and its command codes; its own rules are
the registry's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple, Protocol

from ferrymq.engine.qmgr import QueueManager
from ferrymq.pcf.model import Command, Response

Handler = Callable[[QueueManager, Command], list[Response]]


class Registry(Protocol):
    def define(self, name: str, attrs: Mapping[str, object] | None = None, *, like: str | None = None,
               replace: bool = False) -> object: ...

    def alter(self, name: str, attrs: Mapping[str, object]) -> object: ...

    def delete(self, name: str) -> None: ...

    def require(self, name: str) -> object: ...


class Codes(NamedTuple):
    """A kind's parameter and command codes."""

    name: int  # e.g. MQCA_PROCESS_NAME
    from_name: int
    to_name: int
    create: int
    copy: int
    change: int
    delete: int


def definition_handlers(registry: Callable[[QueueManager], Registry],
                        attributes: Callable[[Command], dict[str, object]], codes: Codes) -> dict[int, Handler]:
    """The four handlers of ``codes``'s kind, by command code."""

    def create(qm: QueueManager, cmd: Command) -> list[Response]:
        registry(qm).define(cmd.text(codes.name), attributes(cmd), replace=cmd.replacing())
        qm.need_sync()
        return [Response()]

    def copy(qm: QueueManager, cmd: Command) -> list[Response]:
        registry(qm).require(cmd.text(codes.from_name))  # an unknown source first, as IBM
        registry(qm).define(cmd.text(codes.to_name), attributes(cmd), like=cmd.text(codes.from_name),
                            replace=cmd.replacing())
        qm.need_sync()
        return [Response()]

    def change(qm: QueueManager, cmd: Command) -> list[Response]:
        registry(qm).alter(cmd.text(codes.name), attributes(cmd))
        qm.need_sync()
        return [Response()]

    def delete(qm: QueueManager, cmd: Command) -> list[Response]:
        registry(qm).delete(cmd.text(codes.name))
        qm.need_sync()
        return [Response()]

    return {codes.create: create, codes.copy: copy, codes.change: change, codes.delete: delete}
