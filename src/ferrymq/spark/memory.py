"""Executor memory: keep the heap's freed megabytes for the next browsed page.

A page is a few megabytes: received, turned into Arrow arrays (the payload without a copy)
and released once Spark has taken the batch, and the next page needs as much again.
glibc serves blocks this large with mmap and hands them back to the kernel on free (and
trims the heap's top likewise), so every page faulted its memory in anew, zeroed by the
kernel: about half of a reading worker's CPU (measured: 1.75 -> 0.9 us per message of
client CPU, bench/RESULTS.md). Raising glibc's mmap and trim thresholds once per worker
process keeps that memory in the heap for the next page, at the price of the process
holding up to TRIM_THRESHOLD of freed memory. Nothing is done on another C library, or
when the environment already sets either threshold (MALLOC_MMAP_THRESHOLD_,
MALLOC_TRIM_THRESHOLD_): the operator's choice stands.
"""

from __future__ import annotations

import ctypes
import os
import platform

M_TRIM_THRESHOLD = -1  # mallopt parameters (malloc.h)
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 * 1024 * 1024  # glibc's largest on 64-bit: blocks below it come from the heap
TRIM_THRESHOLD = 128 * 1024 * 1024  # free memory the heap's top keeps before giving it back
_ENV = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")

_state: list[bool] = []  # [result] once tried: a worker process tries once


def keep_freed_pages() -> bool:
    """Set the thresholds for this process (once); True when they are in force."""
    if not _state:
        _state.append(_tune())
    return _state[0]


def _tune() -> bool:
    if any(name in os.environ for name in _ENV) or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(None)  # the process's own symbols: glibc's mallopt among them
        return bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
            libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    except (OSError, AttributeError):
        return False
