"""Wie viele Kerne dieser Prozess nutzen darf: die Voreinstellung für ``--prozesse``.

``os.cpu_count()`` zählt die Kerne der Maschine, auch die, die dieser Prozess nicht
benutzen darf (``taskset``, cgroup-cpuset eines Containers oder einer systemd-Einheit mit
``AllowedCPUs=``). Mehr Worker als erlaubte Kerne teilen sich nur dieselben Kerne. Darum
zählt hier die CPU-Affinität (``os.sched_getaffinity``); wo es sie nicht gibt (macOS),
``os.cpu_count()``.
"""

from __future__ import annotations

import os


def nutzbar() -> int:
    """Zahl der Kerne, auf denen dieser Prozess laufen darf (mindestens 1)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # kein sched_getaffinity auf dieser Plattform
        return os.cpu_count() or 1
