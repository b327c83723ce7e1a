"""Option queueManagers: a read over several queue managers, each NAME=connName; the
per-queue-manager options and the QMGR:QUEUE keys of offsets."""

from __future__ import annotations

import pytest

from ferrymq.spark.options import OptionError, parse_options


def test_queue_managers_option_rules() -> None:
    opts = parse_options({"queueManagers": "QM1=h1(1414);QM2=h2(1414),h2b(1415)", "queue": "A,B"})
    assert [(o.queue_manager, o.conn_name) for o in opts.one_per_qmgr()] == [("QM1", "h1(1414)"),
                                                                                ("QM2", "h2(1414),h2b(1415)")]
    assert opts.places() == ("QM1:A", "QM1:B", "QM2:A", "QM2:B")
    assert parse_options({"queueManagers": "QM1=h1(1)", "queue": "A",
                          "startingPosition": '{"QM1:A": 3}'}).starting_position == '{"QM1:A": 3}'
    for bad, error in [({"queueManagers": "QM1=h(1)", "connName": "h(1)"}, "leave out connName"),
                       ({"queueManagers": "QM1"}, "NAME=connName entries"),
                       ({"queueManagers": "QM1=h(1);QM1=h(2)"}, "QM1 twice"),
                       ({"queueManagers": "QM1=h(1)", "startingPosition": '{"A": 3}'}, "read: QM1:A")]:
        with pytest.raises(OptionError, match=error):
            parse_options({"queue": "A", **bad})
    with pytest.raises(OptionError, match="for reads"):
        parse_options({"queueManagers": "QM1=h(1)", "queue": "A"}, need_queue=False)
