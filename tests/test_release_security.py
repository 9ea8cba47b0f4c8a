"""Randomness a recipient cannot undo (docs/security.md): the AES stream against a reference AES, key files,
and the dummy-file attack of issue 11 (perturb a same-length file of constant records with the same or a
guessed key/seed; (release - dummy release) mod a_i would be the true record if the noise were the same)."""

import json
import os
import stat

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom, binomtest

from optrr_engine.errors import InputError
from optrr_engine.io.atomic import sha256_file
from optrr_engine.release.codec import Codec
from optrr_engine.release.config import ColumnConfig, ReleaseConfig
from optrr_engine.release.manifest import mechanism_from_manifest
from optrr_engine.release.perturb import perturb_file
from optrr_engine.release.randomness import (
    ReleaseRandomness,
    context_digest,
    generate_key_file,
    key_fingerprint,
    read_key_file,
)

SIZES = {"a": ["x", "y", "z"], "b": ["p", "q", "r", "s"], "c": ["0", "1"]}
EPSILONS = {"a": 1.0, "b": 1.5, "c": 0.5}
N = 1000
GUESSES = range(10_001)


def test_release_stream_is_aes128_ctr():
    """randomgen's AESCounter(key, counter=0) gives AES_k(0), AES_k(1), ... (counters little-endian), as the
    ``cryptography`` package's AES computes them."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    from randomgen.aes import AESCounter

    key = bytes.fromhex("000102030405060708090a0b0c0d0e0f")
    raw = AESCounter(key=int.from_bytes(key, "little"), counter=0).random_raw(64)
    enc = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    blocks = b"".join(enc.update(j.to_bytes(16, "little")) for j in range(32))
    assert raw.tolist() == np.frombuffer(blocks, dtype="<u8").tolist()


def test_keygen_writes_a_private_file_once_and_reads_back(tmp_path):
    path = tmp_path / "hospital.key"
    fingerprint = generate_key_file(path)
    key = read_key_file(path)
    assert len(key) == 32 and key_fingerprint(key) == fingerprint and fingerprint in path.read_text()
    if os.name == "posix":
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    before = path.read_bytes()
    with pytest.raises(InputError, match="never overwritten"):
        generate_key_file(path)
    assert path.read_bytes() == before
    assert read_key_file(generate_key_file(tmp_path / "other.key") and tmp_path / "other.key") != key
    (tmp_path / "short.key").write_text("optrr-key-1 00112233445566778899aabbccddee\n")  # 120 bits
    with pytest.raises(InputError, match="shorter than 128 bits"):
        read_key_file(tmp_path / "short.key")
    (tmp_path / "junk.key").write_text("12345\n")
    with pytest.raises(InputError, match="not an OptRR key file"):
        read_key_file(tmp_path / "junk.key")
    with pytest.raises(InputError, match="at least 128 bits"):
        ReleaseRandomness("secret-key", key=b"1234")


def write_data(folder, name, frame) -> str:
    path = os.path.join(folder, name)
    frame.to_csv(path, index=False)
    return path


def config() -> ReleaseConfig:
    cols = [ColumnConfig(name="id", role="keep")]
    cols += [ColumnConfig(name=n, role="perturb", epsilon=EPSILONS[n], categories=c) for n, c in SIZES.items()]
    return ReleaseConfig(method="kronecker", columns=cols)


def chance_rate() -> float:
    """P(a wrong guess recovers a record) = P(N = N') for independent noise vectors N, N' of per-attribute
    GRR: prod_i (p_i^2 + (a_i - 1) q_i^2), p_i = e^eps / (e^eps + a_i - 1), q_i = 1 / (e^eps + a_i - 1)."""
    rate = 1.0
    for name, cats in SIZES.items():
        a, e = len(cats), np.exp(EPSILONS[name])
        p, q = e / (e + a - 1), 1 / (e + a - 1)
        rate *= p * p + (a - 1) * q * q
    return rate


@pytest.fixture(scope="module")
def setting(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("attack"))
    rng = np.random.default_rng(2026)
    truth = pd.DataFrame({"id": [f"P{i:05d}" for i in range(N)]})
    for name, cats in SIZES.items():
        truth[name] = rng.choice(cats, N)
    dummy = pd.DataFrame({"id": [f"D{i:05d}" for i in range(N)], **{n: c[0] for n, c in SIZES.items()}})
    return folder, write_data(folder, "patients.csv", truth), write_data(folder, "dummy.csv", dummy), truth


def codes_of(path) -> tuple[pd.DataFrame, np.ndarray]:
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    return frame, Codec(config()).encode(frame)


def recovered_share(release, dummy_codes: np.ndarray, truth: pd.DataFrame) -> float:
    """Share of the released records for which (release - dummy) mod a_i equals the true record."""
    frame, codes = codes_of(release)
    sizes = np.array([len(c) for c in SIZES.values()])
    guess = (codes.astype(np.int64) - dummy_codes) % sizes
    true_codes = Codec(config()).encode(truth.set_index("id").loc[frame["id"]].reset_index())
    return float(np.mean(np.all(guess == true_codes, axis=1)))


def release(setting, name, src, **kw):
    folder = setting[0]
    out = os.path.join(folder, name)
    # the kept 'id' links each released record to the truth: kept on purpose by the attack, not the gate's subject
    manifest = perturb_file(
        src, config(), out, audit_dir=folder, allow_repeat=True, allow_flagged_kept=True, **kw
    ).manifest
    return out, manifest


def test_a_test_seed_release_is_undone_completely(setting, developer):
    """Positive control: the attack works on what the test-only mode makes (shuffled or not)."""
    folder, src, dummy, truth = setting
    real, manifest = release(setting, "seeded.csv", src, insecure_test_seed=7)
    fake, _ = release(setting, "seeded_dummy.csv", dummy, insecure_test_seed=7)
    assert manifest["randomness"]["private"] is False
    assert recovered_share(real, codes_of(fake)[1], truth) == 1.0


def dummy_context(mechanism, dummy_path, entry: dict) -> bytes:
    """The stream context of the dummy file's release (``entry``: its audit entry, for the configuration, the reader
    options and the chunk size), as perturb_file computes it: the attacker knows all of it but the key."""
    return context_digest(
        input_sha256=sha256_file(dummy_path),
        config=entry["configuration"],
        reader_options=entry["input"]["reader"],
        codebook=Codec(config()).codebook(),
        mechanism=mechanism.to_dict(),
        kept=["id"],
        shuffle=False,
        chunk_rows=entry["chunk_rows"],
    )


def scan(mechanism, dummy_path, dummy_codes, entry: dict) -> np.ndarray:
    """The attacker's cheap scan: for every guess g in 0..10,000, the noise OptRR would give the dummy file
    with key g (as a 256-bit number) and with test seed g; returns the perturbed dummy codes per guess."""
    context = dummy_context(mechanism, dummy_path, entry)
    for g in GUESSES:
        for source in (
            ReleaseRandomness("secret-key", key=g.to_bytes(32, "big")),
            ReleaseRandomness("insecure-test-seed", test_seed=g),
        ):
            yield mechanism.sample(dummy_codes, source.streams(context)[0])


def best_guess_bound(rate: float) -> int:
    """Matches that one of 2 x 10,001 independent guesses exceeds with probability < 1e-6 (Bonferroni)."""
    return int(binom.isf(1e-6 / (2 * len(GUESSES)), N, rate))


@pytest.mark.parametrize("mode", ["secret-key", "os-entropy"])
def test_dummy_file_attack_recovers_no_more_than_chance(setting, mode, developer):
    folder, src, dummy, truth = setting
    key = {"key": bytes.fromhex("9f" * 16 + "5a" * 16)} if mode == "secret-key" else {}
    real, manifest = release(setting, f"{mode}.csv", src, shuffle=False, **key)
    frame, real_codes = codes_of(real)
    true_codes = Codec(config()).encode(truth)
    rate = chance_rate()
    sizes = np.array([len(c) for c in SIZES.values()])

    # (a) the attacker has the key (or, for OS entropy, simply reruns): perturb the dummy the same way
    fake, _ = release(setting, f"{mode}_dummy.csv", dummy, shuffle=False, **key)
    share = recovered_share(real, codes_of(fake)[1], truth)
    assert binomtest(round(share * N), N, rate, alternative="greater").pvalue > 1e-6, (share, rate)

    # (b) without the key: every key and test seed 0..10,000 on the dummy file
    mechanism = mechanism_from_manifest(manifest)
    audit = json.loads(open(os.path.join(folder, "optrr-audit.json")).read())
    dummy_codes = codes_of(dummy)[1]
    best = 0
    for noise in scan(mechanism, dummy, dummy_codes, audit["releases"][-1]):
        guess = (real_codes.astype(np.int64) - noise) % sizes
        best = max(best, int(np.all(guess == true_codes, axis=1).sum()))
    print(f"{mode}: best of {2 * len(GUESSES)} guesses {best / N:.1%}, chance {rate:.1%}, same-key dummy {share:.1%}")
    assert best <= best_guess_bound(rate), (best / N, rate)


def test_the_scan_reproduces_what_perturb_gives_the_dummy(setting):
    """The in-process scan above is faithful: for one guess it equals perturb_file run on the dummy file."""
    folder, src, dummy, truth = setting
    key = (12345).to_bytes(32, "big")
    fake, manifest = release(setting, "scan_check.csv", dummy, shuffle=False, key=key)
    audit = json.loads(open(os.path.join(folder, "optrr-audit.json")).read())
    mechanism = mechanism_from_manifest(manifest)
    context = dummy_context(mechanism, dummy, audit["releases"][-1])
    noise = mechanism.sample(codes_of(dummy)[1], ReleaseRandomness("secret-key", key=key).streams(context)[0])
    assert np.array_equal(codes_of(fake)[1], noise)


def test_os_entropy_releases_differ_between_runs(setting):
    folder, src, dummy, truth = setting
    one, _ = release(setting, "os1.csv", src)
    two, _ = release(setting, "os2.csv", src)
    assert open(one, "rb").read() != open(two, "rb").read()


def test_a_key_gives_fresh_noise_when_the_configuration_changes_the_codes(setting):
    """Two keyed releases of the same file whose configurations differ only in how one column's texts become codes
    (here: which text is missing), with the same published codebook, must not share their noise: with the same
    stream the two releases would differ exactly in the rows whose code changed, and (difference mod a) would give
    those rows' true values without noise (a reviewer's attack). The same configuration again gives the same
    release (reproducibility)."""
    folder, src, _dummy, _truth = setting
    key = {"key": bytes.fromhex("3c" * 32), "shuffle": False}

    def keyed(name, **change):
        cfg = config()
        col = next(c for c in cfg.columns if c.name == "a")
        col.categories = ["x", "y", "z", "NA"]
        for attr, value in change.items():
            setattr(col, attr, value)
        out = os.path.join(folder, name)
        result = perturb_file(src, cfg, out, audit_dir=folder, allow_repeat=True, allow_flagged_kept=True, **key)
        return pd.read_csv(out, dtype=str, keep_default_na=False), result.manifest["codebook"]

    plain, book = keyed("keyed_plain.csv")
    again, _ = keyed("keyed_again.csv")
    pd.testing.assert_frame_equal(plain, again)
    one, book_one = keyed("keyed_missing_z.csv", missing_values=["z"])
    two, book_two = keyed("keyed_missing_y.csv", missing_values=["y"])
    assert book_one == book_two  # what the recipient sees of the configuration is the same (the texts counted)
    # the columns the change did not touch: independent noise agrees in a row with probability < 0.6
    same = (one[["b", "c"]].to_numpy() == two[["b", "c"]].to_numpy()).all(axis=1).mean()
    assert same < 0.7, same
