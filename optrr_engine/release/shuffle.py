"""Shuffling the records of a release with bounded memory (an external shuffle).

What is shuffled: the order of the output records (each record's perturbed and kept values move
together; nothing inside a record changes). How: every record is sent to one of B temporary bucket files
chosen uniformly at random and independently; afterwards each bucket is read back, put in a uniformly
random order in memory, and written out, bucket after bucket. Because every record is treated alike and
independently, all n! output orders are equally likely (a uniform random permutation). A bucket that turns
out larger than MAX_BUCKET_BYTES is split again the same way before it is loaded, so memory stays bounded
even when the row estimate behind B was wrong.

The bucket files (Arrow IPC streams) live in a hidden temporary folder next to the output
(``.optrr-shuffle-hHOST-pPID-*``) and are deleted when the run ends, also on Ctrl-C or SIGTERM (``optrr`` turns it
into an exception); ``kill -9`` can leave that folder behind (never a partial output), and the next run in that
folder removes it (``io.atomic.remove_stale_temporaries``).
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile

import numpy as np

#: Target size of a bucket file; buckets above MAX_BUCKET_BYTES are split before loading.
TARGET_BUCKET_BYTES = 32 << 20
MAX_BUCKET_BYTES = 64 << 20
MAX_BUCKETS = 1024


def bucket_count(estimated_rows: int, bytes_per_row: float) -> int:
    return int(min(MAX_BUCKETS, max(1, math.ceil(estimated_rows * bytes_per_row / TARGET_BUCKET_BYTES))))


class ExternalShuffle:
    def __init__(self, folder: str, buckets: int, rng: np.random.Generator, prefix: str | None = None):
        from ..io.atomic import SHUFFLE_PREFIX, pid_tag

        self.dir = tempfile.mkdtemp(dir=folder, prefix=prefix or f"{SHUFFLE_PREFIX}{pid_tag()}-")
        self.rng = rng
        self.buckets = max(1, int(buckets))
        self._writers: list = [None] * self.buckets
        self._paths = [os.path.join(self.dir, f"b{i}.arrow") for i in range(self.buckets)]
        self._rows = np.zeros(self.buckets, dtype=np.int64)
        self.schema = None
        self.rows = 0

    # -- phase 1 ------------------------------------------------------------------------------
    def add(self, table) -> None:
        """Send every row of ``table`` to a uniformly random bucket."""
        import pyarrow as pa

        n = table.num_rows
        if n == 0:
            return
        if self.schema is None:
            self.schema = table.schema
        target = self.rng.integers(0, self.buckets, n, dtype=np.uint16)  # MAX_BUCKETS < 2^16
        order = np.argsort(target, kind="stable")  # a radix sort for 16-bit keys
        bounds = np.searchsorted(target[order], np.arange(self.buckets + 1))
        ordered = table.take(pa.array(order))
        for b in range(self.buckets):
            lo, hi = int(bounds[b]), int(bounds[b + 1])
            if hi > lo:
                self._writer(b).write_table(ordered.slice(lo, hi - lo))
                self._rows[b] += hi - lo
        self.rows += n

    def _writer(self, b: int):
        import pyarrow as pa

        if self._writers[b] is None:
            self._writers[b] = pa.ipc.new_stream(pa.OSFile(self._paths[b], "wb"), self.schema)
        return self._writers[b]

    def _close_writers(self) -> None:
        for w in self._writers:
            if w is not None:
                w.close()
        self._writers = [None] * self.buckets

    # -- phase 2 ------------------------------------------------------------------------------
    def tables(self, max_rows: int, ctl=None):
        """The records in uniformly random order, as tables of at most ``max_rows`` rows. A failing disk (full,
        removed) is a one-line InputError; :meth:`cleanup` then removes every temporary file."""
        from ..errors import InputError
        from ..io.atomic import describe_os_error

        try:
            yield from self._tables(max_rows, ctl)
        except OSError as exc:
            raise InputError(describe_os_error(exc, os.path.dirname(self.dir))) from None

    def _tables(self, max_rows: int, ctl=None):
        from .schema import rows_text

        self._close_writers()
        done = 0
        for b in range(self.buckets):
            if self._rows[b] == 0:
                continue
            for table in self._bucket(self._paths[b], depth=0):
                for start in range(0, table.num_rows, max_rows):
                    yield table.slice(start, max_rows)
                done += table.num_rows
                if ctl is not None:
                    ctl.check()
                    ctl.report(done / max(1, self.rows), f"shuffled {rows_text(done)}")

    def _bucket(self, path: str, depth: int):
        import pyarrow as pa

        size = os.path.getsize(path)
        if size > MAX_BUCKET_BYTES and depth < 8:
            yield from self._split(path, math.ceil(size / TARGET_BUCKET_BYTES), depth)
            return
        with pa.OSFile(path, "rb") as fh:
            table = pa.ipc.open_stream(fh).read_all()
        os.unlink(path)
        if table.num_rows:
            yield table.take(pa.array(self.rng.permutation(table.num_rows)))

    def _split(self, path: str, parts: int, depth: int):
        """Re-bucket one oversized bucket uniformly at random into ``parts`` files, then shuffle each."""
        import pyarrow as pa

        sub = ExternalShuffle(self.dir, parts, self.rng, prefix=f"split{depth}-")
        sub.schema = self.schema
        with pa.OSFile(path, "rb") as fh:
            for batch in pa.ipc.open_stream(fh):
                sub.add(pa.Table.from_batches([batch]))
        os.unlink(path)
        sub._close_writers()
        for b in range(sub.buckets):
            if sub._rows[b]:
                yield from sub._bucket(sub._paths[b], depth + 1)

    def cleanup(self) -> None:
        try:
            self._close_writers()
        except Exception:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)
