"""Stop this process, alone, before it makes the kernel kill something else.

Building or checking the biggest Keras models can take more memory than a shared
machine has (EfficientNetB7's calibration once reached 24 GB and the kernel's OOM
killer stepped in).  A daemon thread reads the resident set size every half second and
exits with status 3 and a message once it passes the limit: ``$EGRAFT_BENCH_MAX_RSS_MB``
or 12000 MB.  (An address-space rlimit does not work: TensorFlow reserves far more
virtual memory than it uses.)
"""

from __future__ import annotations

import os
import sys
import threading
import time

EXIT_STATUS = 3


def limit_mb() -> int:
    return int(os.environ.get("EGRAFT_BENCH_MAX_RSS_MB", "12000"))


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def start(what: str) -> None:
    """Watch this process while it does ``what`` (named in the message)."""
    if not os.path.exists("/proc/self/statm"):
        return
    limit = limit_mb()

    def watch() -> None:
        while True:
            rss = _rss_mb()
            if rss > limit:
                sys.stderr.write(f"memory guard: {what} used {rss:.0f} MB, over the {limit} MB limit "
                                 f"($EGRAFT_BENCH_MAX_RSS_MB)\n")
                sys.stderr.flush()
                os._exit(EXIT_STATUS)
            time.sleep(0.5)

    threading.Thread(target=watch, daemon=True, name="memory-guard").start()
