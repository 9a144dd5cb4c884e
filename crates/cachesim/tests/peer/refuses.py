"""Which parameter values libCacheSim 0.3.5 (the Python binding) refuses.

Reads lines `CLASS KWARG VALUE SIZE` on stdin; for each, builds the cache
in a forked child and feeds it 3,000 requests over 1,500 objects of size
1. libCacheSim refuses by aborting (its ERROR macro), so the child's exit
tells: prints `refused` or `accepted` per line, in order.
"""
import os
import signal
import sys

import libcachesim as lcs

for line in sys.stdin:
    cls, kw, val, size = line.split()
    v = float(val) if any(c in val for c in ".e") else int(val)
    pid = os.fork()
    if pid == 0:
        # The child: stderr silenced (libCacheSim's messages), exit 0 if
        # the cache was built and ran.
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 2)
        signal.alarm(20)  # a cache that hangs is not an answer
        c = getattr(lcs, cls)(int(size), **{kw: v})
        r = lcs.Request()
        for i in range(3000):
            r.obj_id = i % 1500
            r.obj_size = 1
            c.get(r)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    print("accepted" if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else "refused")
    sys.stdout.flush()
