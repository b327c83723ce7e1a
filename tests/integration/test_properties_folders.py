"""Every folder shape of an MQRFH2 both ways, over TCP: put as an MQRFH2, the properties a
getter with a handle sees and the MQRFH2 a getter without one receives, under each PROPCTL;
and set through a handle, the MQRFH2 it comes back in. The folder and its groups survive
each way (IBM's mapping: ``<folder><group><element>`` is ``folder.group.element``; an element
directly in ``usr`` is named alone; a group in ``usr`` keeps ``usr.`` in its name)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from propctl_queues import define_propctl_queues

import ferrymq.client as fc
import ferrymq.pymqi as pymqi
from ferrymq.api import EmbeddedQueueManager
from ferrymq.mq import constants as C
from ferrymq.properties.model import PropertySet
from ferrymq.pymqi import CMQC
from ferrymq.wire.rfh2 import MQRFH2, unpack_chain

BODY = b"body"

S, I4, I8 = C.MQTYPE_STRING, C.MQTYPE_INT32, C.MQTYPE_INT64
# (folder text as put, the properties it holds with their types, whether they count for PROPCTL(COMPAT)).
SHAPES: list[tuple[str, dict[str, tuple[int, object]], bool]] = [
    ("<usr><color>red</color></usr>", {"color": (S, "red")}, True),
    ("<usr><grp><x>1</x></grp></usr>", {"usr.grp.x": (S, "1")}, True),
    ("<usr><a><b><c dt='i4'>7</c></b></a><top>t</top></usr>", {"usr.a.b.c": (I4, 7), "top": (S, "t")}, True),
    ("<mcd><Msd>jms_text</Msd></mcd>", {"mcd.Msd": (S, "jms_text")}, True),
    ("<mq_usr><g><e>v</e></g></mq_usr>", {"mq_usr.g.e": (S, "v")}, False),
    ("<acme content='properties'><g><h><e dt='i8'>5</e></h></g></acme>", {"acme.g.h.e": (I8, 5)}, False),
]
IDS = [s[0] for s in SHAPES]
QUEUES = {"F.COMPAT": C.MQPROP_COMPATIBILITY, "F.ALL": C.MQPROP_ALL, "F.NONE": C.MQPROP_NONE,
          "F.FORCE": C.MQPROP_FORCE_MQRFH2, "F.V6COMPAT": C.MQPROP_V6COMPAT}


@pytest.fixture
def emb(embedded: EmbeddedQueueManager) -> EmbeddedQueueManager:
    return define_propctl_queues(embedded, QUEUES)


@pytest.fixture
def qmgr(emb: EmbeddedQueueManager) -> Iterator[pymqi.QueueManager]:
    qm = pymqi.connect("QM1", "DEV.APP.SVRCONN", f"127.0.0.1({emb.port})")
    yield qm
    qm.disconnect()


def _put_rfh2(qmgr: pymqi.QueueManager, queue: str, folder: str) -> bytes:
    data = MQRFH2((folder,), C.MQENC_NATIVE, 1208, C.MQFMT_STRING).pack() + BODY
    q = pymqi.Queue(qmgr, queue)
    q.put(data, pymqi.MD(Format=CMQC.MQFMT_RF_HEADER_2, CodedCharSetId=1208))
    q.close()
    return data


def _get_plain(qmgr: pymqi.QueueManager, queue: str) -> tuple[bytes, list[str]]:
    """A getter without a message handle: the data and the folders of its MQRFH2s."""
    q = pymqi.Queue(qmgr, queue)
    md = pymqi.MD()
    data = q.get(None, md, pymqi.GMO())
    q.close()
    headers, end, _fmt, _enc = unpack_chain(data, md.Format.decode(), md.Encoding)
    assert data[end:] == BODY
    return data, [f for h in headers for f in h.folders]


def _get_handle(emb: EmbeddedQueueManager, queue: str) -> tuple[dict[str, tuple[int, object]], bytes]:
    """A getter with a message handle (the Pythonic client): the typed properties and the data."""
    with fc.connect("QM1", f"127.0.0.1({emb.port})") as client:
        msg = client.open(queue).get()
    props = msg.properties
    return {name: (props.type_of(name), props[name]) for name in props}, msg.data


@pytest.mark.parametrize(("folder", "props", "compat"), SHAPES, ids=IDS)
@pytest.mark.parametrize("queue", list(QUEUES))
def test_an_mqrfh2_folder_keeps_its_shape(qmgr: pymqi.QueueManager, emb: EmbeddedQueueManager, queue: str,
                                          folder: str, props: dict[str, tuple[int, object]], compat: bool) -> None:
    put = _put_rfh2(qmgr, queue, folder)
    data, folders = _get_plain(qmgr, queue)
    propctl = QUEUES[queue]
    if propctl == C.MQPROP_V6COMPAT:
        assert data == put  # exactly as put
    elif propctl == C.MQPROP_NONE or (propctl == C.MQPROP_COMPATIBILITY and not compat):
        assert folders == []
    else:
        assert folders == [folder]

    _put_rfh2(qmgr, queue, folder)
    got, data = _get_handle(emb, queue)
    if propctl in (C.MQPROP_FORCE_MQRFH2, C.MQPROP_V6COMPAT):
        assert got == {}  # FORCE: never in a handle; V6COMPAT: an MQRFH2 the putter made stays one
        assert folder.encode() in data
    else:
        assert got == props and data == BODY


@pytest.mark.parametrize(("folder", "props", "compat"), SHAPES, ids=IDS)
def test_properties_set_in_a_handle_come_back_in_their_folder(qmgr: pymqi.QueueManager, emb: EmbeddedQueueManager,
                                                              folder: str, props: dict[str, tuple[int, object]],
                                                              compat: bool) -> None:
    typed = PropertySet()
    for name, (ptype, value) in props.items():
        typed.set(name, value, ptype)
    with fc.connect("QM1", f"127.0.0.1({emb.port})") as client:
        client.open("F.ALL").put(BODY, properties=typed)
    _data, folders = _get_plain(qmgr, "F.ALL")
    assert folders == [folder]
