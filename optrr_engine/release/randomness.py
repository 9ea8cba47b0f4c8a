"""Where a release's randomness comes from (docs/security.md explains the threat model).

Every random number of a release (the perturbation and the shuffle) comes from AES-128 in counter mode
(``randomgen.AESCounter``: block j of the stream is AES_k(j), the 128-bit counter little-endian), a
cryptographically secure generator: without its key, its output cannot be told from independent uniform
bits, so neither the noise of one record nor the key can be worked out from other records' noise. The two
streams (perturbation, shuffle) get separate keys. Three sources of those keys:

- ``os-entropy`` (the default): fresh 128-bit keys from the operating system (``secrets``), recorded
  nowhere; a release cannot be reproduced, by anyone.
- ``secret-key``: a hospital key of at least 128 bits made by ``optrr keygen`` (a file that stays with the
  hospital). Stream key = HMAC-SHA256(hospital key, label || SHA-256 of the release context) truncated to
  128 bits, where the context is the input file's SHA-256, the codebook, the mechanism, the kept columns,
  the shuffle flag and the chunk size: the same key, file and configuration reproduce the release exactly;
  anything else (another file, a dummy of the same length, another configuration) gives unrelated noise.
  Only ``key_fingerprint`` (an HMAC of a fixed text, not the key) goes into the hospital's audit record.
- ``insecure-test-seed``: a small integer seed, for tests only, accepted only when the environment variable
  ``OPTRR_DEVELOPER=1`` is set. The stream depends on the seed alone, so anyone who finds the seed (by trying
  small numbers) can undo the release. Manifest and report say NOT PRIVATE, and so does the data file itself:
  its first column, ``NOT_PRIVATE_insecure_test_seed``, holds ``yes`` on every row (a recipient who gets the
  file alone still sees it; the readers of a release ignore that column as data and warn).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import hmac
import json
import os
import secrets
import stat

import numpy as np

from ..errors import InputError

GENERATOR = "AES-128 in counter mode (randomgen AESCounter)"
KEY_BYTES = 32
MIN_KEY_BYTES = 16
KEY_TAG = "optrr-key-1"
SOURCES = ("os-entropy", "secret-key", "insecure-test-seed")
_STREAMS = ("perturb", "shuffle")
#: The label of a keyed release's stream keys: "optrr-stream-2" since the context holds the whole configuration and
#: the reader options (a keyed release made under "optrr-stream-1" is not reproduced by this version).
STREAM_SCHEME = "optrr-stream-2"
#: The environment variable that unlocks the insecure test seed (developers and the test suite only).
DEVELOPER_ENV = "OPTRR_DEVELOPER"
#: The first column of a test-seed release, "yes" on every row: the data file itself says it is not private.
NOT_PRIVATE_COLUMN = "NOT_PRIVATE_insecure_test_seed"
NOT_PRIVATE_VALUE = "yes"
NOT_PRIVATE_WARNING = (
    "this release is NOT PRIVATE: it was made with an insecure test seed, and anyone can undo its randomization; "
    "never use or share it as a private release"
)


def developer_mode() -> bool:
    """True when ``OPTRR_DEVELOPER=1``: only then is the insecure test seed accepted."""
    return os.environ.get(DEVELOPER_ENV, "").strip() == "1"


def mark_not_private(table):
    """``table`` (Arrow) with the column NOT_PRIVATE_COLUMN = "yes" on every row put first."""
    import pyarrow as pa

    marker = pa.DictionaryArray.from_arrays(
        pa.array(np.zeros(table.num_rows, dtype=np.int8)), pa.array([NOT_PRIVATE_VALUE], type=pa.string())
    )
    return table.add_column(0, NOT_PRIVATE_COLUMN, marker)


def not_private_reason(column_names, manifest: dict | None = None) -> str | None:
    """The warning for a release that is not private (the data file has the marker column, or its manifest
    says ``randomness.private: false``), else None. The file's marker counts even when the manifest says
    otherwise."""
    if NOT_PRIVATE_COLUMN in [str(c) for c in column_names]:
        return f"{NOT_PRIVATE_WARNING} (the data file's column {NOT_PRIVATE_COLUMN} says so)"
    if manifest is not None and (manifest.get("randomness") or {}).get("private") is False:
        return f"{NOT_PRIVATE_WARNING} (its manifest says so)"
    return None


def aes_generator(key16: bytes) -> np.random.Generator:
    """A numpy Generator over AES-128-CTR keyed with 16 bytes (counter from 0)."""
    from randomgen.aes import AESCounter

    if len(key16) != 16:
        raise ValueError("AES-128 needs a 16-byte key")
    return np.random.Generator(AESCounter(key=int.from_bytes(key16, "little"), counter=0))


def key_fingerprint(key: bytes) -> str:
    """HMAC-SHA256(key, "optrr-key-fingerprint"), first 16 hex digits: names a key without revealing it (an
    HMAC, not a plain hash, so a fingerprint does not help anyone test guesses of the key offline)."""
    return hmac.new(key, b"optrr-key-fingerprint", hashlib.sha256).hexdigest()[:16]


def context_digest(**parts) -> bytes:
    """SHA-256 of the canonical JSON of the release context (what the stream of a keyed release depends on)."""
    from .manifest import json_safe

    text = json.dumps(json_safe(parts), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).digest()


class ReleaseRandomness:
    """The key source of one release; :meth:`streams` gives the (perturb, shuffle) generators."""

    def __init__(
        self,
        source: str = "os-entropy",
        key: bytes | None = None,
        test_seed: int | None = None,
        developer: bool | None = None,
    ):
        """``developer``: whether the insecure test seed is allowed (default: :func:`developer_mode` of this
        process; a GUI worker process gets the answer of the window's process, where the user set it)."""
        if source not in SOURCES:
            raise InputError(f"randomness source {source!r} is unknown; choose {', '.join(SOURCES)}")
        self.source = source
        self.key = key
        self.test_seed = test_seed
        allowed = developer_mode() if developer is None else bool(developer)
        if source == "insecure-test-seed" and not allowed:
            raise InputError(
                f"the insecure test seed is for OptRR's developers and tests only (set {DEVELOPER_ENV}=1); "
                "a release uses OS randomness (default) or --key-file"
            )
        if source == "secret-key" and (not isinstance(key, bytes) or len(key) < MIN_KEY_BYTES):
            raise InputError(f"a release key must have at least {8 * MIN_KEY_BYTES} bits; make one with optrr keygen")

    @classmethod
    def choose(cls, key: bytes | None = None, insecure_test_seed=None, developer: bool | None = None):
        if key is not None and insecure_test_seed is not None:
            raise InputError("give either a key file or an insecure test seed, not both")
        if key is not None:
            return cls("secret-key", key=key)
        if insecure_test_seed is not None:
            return cls("insecure-test-seed", test_seed=check_test_seed(insecure_test_seed), developer=developer)
        return cls("os-entropy")

    @property
    def private(self) -> bool:
        return self.source != "insecure-test-seed"

    @property
    def needs_context(self) -> bool:
        return self.source == "secret-key"

    def stream_keys(self, context: bytes | None = None) -> list[bytes]:
        if self.source == "os-entropy":
            return [secrets.token_bytes(16) for _ in _STREAMS]
        if self.source == "secret-key":
            if context is None or self.key is None:
                raise ValueError("a keyed release needs its key and its context digest")
            label = STREAM_SCHEME.encode()
            return [hmac.new(self.key, label + b"\0" + s.encode() + b"\0" + context, "sha256").digest()[:16]
                    for s in _STREAMS]
        material = f"optrr-insecure-test-seed-1\0{self.test_seed}".encode()
        return [hmac.new(material, s.encode(), "sha256").digest()[:16] for s in _STREAMS]

    def streams(self, context: bytes | None = None) -> tuple[np.random.Generator, np.random.Generator]:
        """(perturbation, shuffle) generators."""
        sample_key, shuffle_key = self.stream_keys(context)
        return aes_generator(sample_key), aes_generator(shuffle_key)

    def manifest_entry(self) -> dict:
        """What the recipient is told: the generator and whether the release is private (no key material)."""
        d = {"source": self.source, "generator": GENERATOR, "private": self.private}
        if not self.private:
            d["test_seed"] = self.test_seed
            d["warning"] = "NOT PRIVATE: made with a test seed; anyone can undo the randomization"
        return d

    def audit_entry(self) -> dict:
        """What the hospital keeps: the manifest entry plus the key's fingerprint and the stream scheme (a keyed
        release is reproduced by the same key, input, configuration and scheme)."""
        d = self.manifest_entry()
        if self.source == "secret-key" and self.key is not None:
            d["key_fingerprint"] = key_fingerprint(self.key)
            d["stream_scheme"] = STREAM_SCHEME
        return d


def check_test_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or int(seed) < 0:
        raise InputError(f"the test seed must be a whole number >= 0; got {seed!r}")
    return int(seed)


# -- key files -----------------------------------------------------------------------------------------
def key_file_text(key: bytes) -> str:
    made = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    return (
        "# OptRR release key. SECRET: keep it with the hospital, never send it with a release.\n"
        f"# Made by optrr keygen on {made}; fingerprint {key_fingerprint(key)}.\n"
        "# With it, optrr perturb --key-file reproduces a release exactly; without it nobody can.\n"
        f"{KEY_TAG} {key.hex()}\n"
    )


def generate_key_file(path) -> str:
    """Write a new random key (256 bits from ``secrets``) to ``path`` with permissions 0600; an existing file
    is never overwritten. Returns the key's fingerprint."""
    path = os.fspath(path)
    key = secrets.token_bytes(KEY_BYTES)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(f"the folder of key file {path} does not exist; create it or choose another")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
    except FileExistsError:
        raise InputError(f"key file {path} exists; a key is never overwritten (choose another name)") from None
    except OSError as exc:
        from ..io.atomic import describe_os_error

        raise InputError(describe_os_error(exc, path)) from None
    try:
        with os.fdopen(fd, "w", encoding="ascii", newline="\n") as fh:
            fh.write(key_file_text(key))
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        from ..io.atomic import describe_os_error

        try:
            os.unlink(path)
        except OSError:
            pass
        raise InputError(describe_os_error(exc, path)) from None
    return key_fingerprint(key)


def read_key_file(path) -> bytes:
    """The key in a file written by :func:`generate_key_file` (at least 128 bits); a key that is obviously not
    random (:func:`looks_random`) is refused."""
    path = os.fspath(path)
    try:
        with open(path, encoding="ascii") as fh:
            text = fh.read(4096)
    except FileNotFoundError:
        raise InputError(f"key file {path} does not exist; make one with optrr keygen -o {path}") from None
    except (OSError, UnicodeDecodeError):
        raise InputError(f"key file {path} cannot be read as an OptRR key") from None
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == KEY_TAG:
            try:
                key = bytes.fromhex(parts[1])
            except ValueError:
                break
            if len(key) < MIN_KEY_BYTES:
                raise InputError(f"key file {path} holds a key shorter than {8 * MIN_KEY_BYTES} bits")
            if not looks_random(key):
                raise InputError(
                    f"key file {path} holds a key that is obviously not random (too few different byte values, as in "
                    "all zeros): anyone could guess it; make a random key with optrr keygen -o NEW.key and give that"
                )
            return key
    raise InputError(f"{path} is not an OptRR key file (make one with optrr keygen)")


def looks_random(key: bytes) -> bool:
    """False for a key obviously not drawn at random: among its first KEY_BYTES bytes, fewer distinct byte values
    than half their number (all bytes equal, a short pattern repeated). Random bytes have nearly all distinct
    values (30 of 32 on average; fewer than 16 practically never happens)."""
    head = key[:KEY_BYTES]
    return len(set(head)) * 2 >= len(head)


def key_file_is_shared(path) -> bool:
    """True when others than the owner may read the key file (POSIX permissions)."""
    if os.name != "posix":
        return False
    try:
        return bool(os.stat(path).st_mode & (stat.S_IRWXG | stat.S_IRWXO))
    except OSError:
        return False
