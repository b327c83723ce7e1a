"""A sending channel's batches in doubt, oldest first: what reconnection resolves against
the receiver's last committed sequence number (two of them with pipelining)."""

from __future__ import annotations

from ferrymq.engine.chlcontrol import batch_xid, batches_in_doubt, committed_at_receiver

WRAP = 999_999_999


def seqs(xids: list[bytes], channel: str = "A.TO.B", wrap: int = WRAP) -> list[int]:
    found = batches_in_doubt(xids, channel, wrap)
    assert all(xid == batch_xid(channel, seq) for xid, seq in found)
    return [seq for _, seq in found]


def test_one_or_none() -> None:
    assert seqs([]) == []
    assert seqs([batch_xid("A.TO.B", 7)]) == [7]


def test_other_channels_and_other_xids_are_not_ours() -> None:
    xids = [batch_xid("A.TO.C", 7), b"spark:abc", batch_xid("A.TO.B", 9), batch_xid("A.TO.BB", 8)]
    assert seqs(xids) == [9]


def test_two_in_sending_order_whatever_the_order_found() -> None:
    assert seqs([batch_xid("A.TO.B", 12), batch_xid("A.TO.B", 11)]) == [11, 12]
    assert seqs([batch_xid("A.TO.B", 11), batch_xid("A.TO.B", 12)]) == [11, 12]


def test_the_batch_after_the_wrap_comes_after_the_last_number() -> None:
    assert seqs([batch_xid("A.TO.B", 1), batch_xid("A.TO.B", 50)], wrap=50) == [50, 1]
    assert seqs([batch_xid("A.TO.B", 1), batch_xid("A.TO.B", WRAP)]) == [WRAP, 1]


def test_numbers_that_do_not_follow_each_other_go_by_number() -> None:
    assert seqs([batch_xid("A.TO.B", 30), batch_xid("A.TO.B", 4)]) == [4, 30]


def test_the_receiver_commits_in_order_so_its_last_splits_ours() -> None:
    assert committed_at_receiver([11, 12], 10) == [False, False]  # neither arrived (or committed)
    assert committed_at_receiver([11, 12], 11) == [True, False]  # the first committed, the second not
    assert committed_at_receiver([11, 12], 12) == [True, True]
    assert committed_at_receiver([50, 1], 50) == [True, False]  # across the wrap
    assert committed_at_receiver([7], 7) == [True]
    assert committed_at_receiver([], 3) == []
