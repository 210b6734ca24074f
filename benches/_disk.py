"""File helpers the disk benchmarks share (checkpoint.py, records.py)."""

import os


def fsync_paths(paths):
    """fsyncs every file (or directory) in ``paths``."""
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def drop_cache(paths):
    """Writes the files back and drops their pages from the page cache (no root needed)."""
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
