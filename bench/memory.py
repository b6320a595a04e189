"""Peak memory of the running process, for the benchmark sides."""

from __future__ import annotations

import resource


def peak_rss_mb() -> float:
    """This process's peak resident set in MiB: VmHWM, which starts afresh at exec. (ru_maxrss does not:
    Linux carries the parent's resident set at fork into the child's figure, so a side started by a
    large parent would report the parent's peak.)"""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
