"""get_many takes messages whose properties a getter's handle receives as stored without
asking propctl per message; what each getter receives is what MQGET one by one gives."""

from __future__ import annotations

import pytest
from engine_helpers import Env
from test_engine_pubsub import publish, sub

from ferrymq.engine.api import GetOptions, GetResult
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD


def _copies(n: int) -> tuple[Env, int]:
    env = Env()
    s = sub(env, "news/#", sub_user_data="desk")
    for i in range(n):
        publish(env, "news/a", f"p{i}".encode())
    return env, s.hobj


def _shown(r: GetResult) -> tuple[bytes, bytes, int, object]:
    props = dict(r.properties) if r.properties is not None else None
    return r.md.pack(), r.data, r.reason, props


_OPTIONS = [0, C.MQGMO_PROPERTIES_IN_HANDLE, C.MQGMO_PROPERTIES_FORCE_MQRFH2, C.MQGMO_NO_PROPERTIES,
            C.MQGMO_PROPERTIES_COMPATIBILITY]


# PROPERTIES_IN_HANDLE without a handle is MQRC_HMSG_ERROR (propctl's option checks).
@pytest.mark.parametrize(("options", "handle"), [(o, h) for o in _OPTIONS for h in (True, False)
                                                 if h or o != C.MQGMO_PROPERTIES_IN_HANDLE])
def test_get_many_gives_what_gets_one_by_one_give(options: int, handle: bool) -> None:
    gmo = GetOptions(C.MQGMO_NO_WAIT | options, 0, C.MQMO_NONE, msg_handle=handle)
    env, hobj = _copies(4)
    many, _ = env.qm.get_many(env.hconn, hobj, MQMD(), gmo, 1 << 16, 10, 1 << 20)
    env, hobj = _copies(4)
    one = [env.qm.get(env.hconn, hobj, MQMD(), gmo, 1 << 16) for _ in range(4)]
    assert [_shown(r) for r in many] == [_shown(r) for r in one]  # type: ignore[arg-type]
    if handle and options in (0, C.MQGMO_PROPERTIES_IN_HANDLE):
        queued = env.qm.objects.require(env.qm.objects.require(many[0].queue).name)
        assert all(r.properties is not None and r.properties["mqps.Top"] == "news/a" for r in many)
        assert all(r.properties is not m.properties for r in many for m in queued.messages.by_seq.values())


def test_a_frame_bound_counts_the_properties() -> None:
    env, hobj = _copies(3)
    gmo = GetOptions(C.MQGMO_NO_WAIT, 0, C.MQMO_NONE, msg_handle=True)
    one, _ = env.qm.get_many(env.hconn, hobj, MQMD(), gmo, 1 << 16, 10, 1 << 20, frame_bytes=10, framing=0)
    assert len(one) == 1  # the first is taken as MQGET takes it; the next does not fit 10 bytes
