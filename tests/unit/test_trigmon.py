"""The trigger monitor's reading of trigger messages and the command line it starts."""

from __future__ import annotations

import pytest

from ferrymq.cli.trigmon import command_for, read_trigger_message
from ferrymq.mq import constants as C
from ferrymq.wire.mqtm import MQTM, MQTMC2


def test_command_line_is_applicid_then_the_mqtmc2_then_envrdata() -> None:
    tm = MQTM("APP.Q", "P", "td", C.MQAT_UNIX, "/opt/app/serve --mode 'a b'", "--out x.txt", "ud")
    start = command_for(tm, "QM1")
    assert start.argv[:3] == ["/opt/app/serve", "--mode", "a b"] and start.argv[4:] == ["--out", "x.txt"]
    assert not start.background
    parsed = MQTMC2.parse(start.argv[3])
    assert (parsed.q_name, parsed.q_mgr_name, parsed.user_data) == ("APP.Q", "QM1", "ud")
    assert command_for(MQTM(appl_type=C.MQAT_UNIX, appl_id="prog", env_data="-v &"), "QM1").background


@pytest.mark.parametrize("tm", [MQTM(appl_type=C.MQAT_CICS, appl_id="prog"), MQTM(appl_type=C.MQAT_UNIX, appl_id=" "),
                                MQTM(appl_type=C.MQAT_UNIX, appl_id="'unclosed")])
def test_what_the_monitor_does_not_start(tm: MQTM) -> None:
    with pytest.raises(ValueError):
        command_for(tm, "QM1")


def test_only_trigger_messages_are_read() -> None:
    raw = MQTM("Q", appl_type=C.MQAT_UNIX, appl_id="p").pack()
    assert read_trigger_message("MQTRIG  ", raw).q_name == "Q"
    for fmt, data in (("MQSTR   ", raw), ("MQTRIG  ", raw[:-1]), ("MQTRIG  ", b"XX  " + raw[4:])):
        with pytest.raises(ValueError):
            read_trigger_message(fmt, data)
