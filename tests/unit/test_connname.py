"""Connection names: what parses, and a malformed one as MQRC_CD_ERROR naming the rule,
from ``ferrymq.client.connect`` before any socket is opened."""

from __future__ import annotations

import pytest

import ferrymq.client as fc
from ferrymq.client.connname import RULE, MalformedConnName, parse_conn_name
from ferrymq.mq import constants as C


def test_names_that_parse() -> None:
    assert parse_conn_name("localhost(1414)") == [("localhost", 1414)]
    assert parse_conn_name("a(1), b") == [("a", 1), ("b", 1414)]
    assert parse_conn_name("::1(1415)") == [("::1", 1415)]
    assert parse_conn_name("host:7") == [("host", 7)]


@pytest.mark.parametrize("name", ["localhost(notaport)", "localhost(0)", "h(70000)", "", " , ", "a(1", "h:x"])
def test_a_malformed_name_is_cd_error_naming_the_rule(name: str) -> None:
    with pytest.raises(MalformedConnName) as exc:
        fc.connect("QM1", name, connect_timeout=1)
    assert (exc.value.comp, exc.value.reason) == (C.MQCC_FAILED, C.MQRC_CD_ERROR)
    assert f"connection name {name!r} is malformed" in str(exc.value) and RULE in str(exc.value)
    assert isinstance(exc.value, ValueError)  # what it was before it had a reason code
