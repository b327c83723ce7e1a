"""The generated constants equal shared/specs/mq-constants.json, name for name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ferrymq.errors import MQError, reason_name
from ferrymq.mq import MQRC, MQRO
from ferrymq.mq import constants as C

SPEC = Path(__file__).resolve().parents[3] / "shared" / "specs" / "mq-constants.json"


@pytest.mark.skipif(not SPEC.exists(), reason="shared/specs is not beside this checkout")
def test_every_constant_matches_the_header_list() -> None:
    data = json.loads(SPEC.read_text())
    for name, value in data.items():
        ours = getattr(C, name)
        if isinstance(value, str) and "\\0" in value:
            assert ours == value.replace("\\0", "\0").encode("latin-1"), name
        else:
            assert ours == value, name


def test_known_values_and_enums() -> None:
    assert (C.MQRC_NO_MSG_AVAILABLE, C.MQRC_Q_FULL, C.MQRC_MSG_TOO_BIG_FOR_Q) == (2033, 2053, 2030)
    assert (C.MQENC_NATIVE, C.MQMD_LENGTH_2, C.MQFMT_STRING) == (546, 364, "MQSTR   ")
    assert MQRC(2085).name == "UNKNOWN_OBJECT_NAME" and MQRO.COA == 0x100
    assert reason_name(2033) == "MQRC_NO_MSG_AVAILABLE" and reason_name(123456) == "123456"
    err = MQError(2, 2053, "Q1 holds MAXDEPTH(10) messages")
    assert (err.comp, err.reason) == (2, 2053) and "MQRC_Q_FULL" in str(err) and "MAXDEPTH(10)" in str(err)
