"""Sampler speed on in-memory codes: cells per second, and the ratio to numpy drawing one uniform per cell.

Targets (issue 4): >= 30 million cells/s per core for Kronecker and heuristic designs, and within 3x of
``rng.random((n, k))`` measured in the same run. Everything runs in one thread (numpy's random and
elementwise operations are single-threaded), so the numbers are per core. Each timing is the best of
REPEATS runs; the machine may be shared, so the ratio (measured back to back) is the steadier number.

Second table (issue 11): rows per second of the same samplers with the random stream a release uses
(AES-128-CTR, randomgen AESCounter, keyed from OS entropy by default or from a hospital key) against
numpy's default PCG64 (what releases used before), and two alternatives that were considered: AES-128-CTR
without AES-NI (randomgen's portable code) and ChaCha20.

    python bench/sampler.py [--cells 20000000] [--repeats 5] [--skip-speed] [--skip-generators]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from optrr_engine.designs import run_design
from optrr_engine.designs.product import joint_grr_clusters


def best_time(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def cases():
    rng = np.random.default_rng(0)
    mixed100 = rng.integers(2, 7, 100)
    mixed1000 = rng.integers(2, 7, 1000)
    yield "kronecker k=20 a=5 eps=1", run_design("kronecker", [5] * 20, [1.0] * 20).mechanism
    yield "kronecker k=100 a=2..6 eps=0.5..3", run_design("kronecker", mixed100, rng.uniform(0.5, 3, 100)).mechanism
    yield "heuristic k=20 a=5 eps=1 (dense rows)", run_design("heuristic", [5] * 20, [1.0] * 20).mechanism
    yield "heuristic k=20 a=5 eps=3 (sparse rows)", run_design("heuristic", [5] * 20, [3.0] * 20).mechanism
    yield "heuristic k=100 a=2..6 eps=1", run_design("heuristic", mixed100, [1.0] * 100).mechanism
    yield "heuristic k=1000 a=2..6 eps=0.05", run_design("heuristic", mixed1000, [0.05] * 1000).mechanism
    yield "optimal k=8 a=4 eps=1 (pattern table)", run_design("optimal", [4] * 8, [1.0] * 8).mechanism
    groups = [list(range(i, i + 4)) for i in range(0, 20, 4)]
    yield "joint-GRR clusters 5 x 4 attrs a=5", joint_grr_clusters([5] * 20, [2.0] * 5, groups)


def generators():
    """(label, factory of a fresh Generator) for the release-stream comparison."""
    from randomgen.aes import AESCounter
    from randomgen.chacha import ChaCha

    from optrr_engine.release.randomness import ReleaseRandomness, context_digest

    def soft_aes():
        bits = AESCounter(key=12345, counter=0)
        bits.use_aesni = False
        return np.random.Generator(bits)

    context = context_digest(input_sha256="0" * 64)
    yield "PCG64 (numpy default, before)", lambda: np.random.default_rng()
    yield "AES-128-CTR, OS entropy (default)", lambda: ReleaseRandomness().streams()[0]
    yield "AES-128-CTR, hospital key", lambda: ReleaseRandomness("secret-key", key=bytes(32)).streams(context)[0]
    yield "AES-128-CTR without AES-NI", soft_aes
    yield "ChaCha20 (randomgen)", lambda: np.random.Generator(ChaCha(key=12345, counter=0, rounds=20))


def generator_table(cells: int, repeats: int) -> None:
    rows_target = max(1000, cells // 20)
    print(f"\n{'design':<42} {'random stream':<36} {'rows/s':>12} {'vs PCG64':>9}")
    for label, mech in cases():
        if not label.startswith(("kronecker k=20", "heuristic k=20 a=5 eps=1", "optimal")):
            continue
        rng = np.random.default_rng(1)
        n = rows_target
        codes = np.column_stack([rng.integers(0, a, n) for a in mech.sizes]).astype(np.int16)
        base = None
        for name, make in generators():
            gen = make()
            mech.sample(codes[:1000], gen)
            slow = "without AES-NI" in name
            sub = codes[: n // 10] if slow else codes  # the portable AES is slow: time a tenth
            t = best_time(lambda: mech.sample(sub, gen), 1 if slow else repeats) / len(sub)  # noqa: B023
            base = base or t
            print(f"{label:<42} {name:<36} {1 / t:>12,.0f} {base / t:>9.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cells", type=int, default=20_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-speed", action="store_true", help="only the random-stream table")
    parser.add_argument("--skip-generators", action="store_true", help="only the speed table")
    args = parser.parse_args()
    if not args.skip_generators:
        generator_table(args.cells, args.repeats)
    if args.skip_speed:
        return
    print(f"{'design':<42} {'k':>5} {'rows':>9} {'M cells/s':>10} {'numpy M/s':>10} {'ratio':>6}  target")
    for label, mech in cases():
        k = mech.k
        n = max(1, args.cells // k)
        rng = np.random.default_rng(1)
        codes = np.column_stack([rng.integers(0, a, n) for a in mech.sizes]).astype(np.int16)
        mech.sample(codes[:1000], rng)  # warm caches (pattern CDFs)
        t_numpy = best_time(lambda: rng.random((n, k)), args.repeats)  # noqa: B023 - used immediately
        t_sample = best_time(lambda: mech.sample(codes, rng), args.repeats)  # noqa: B023
        cells = n * k
        speed = cells / t_sample / 1e6
        ratio = t_sample / t_numpy
        targeted = label.startswith(("kronecker", "heuristic"))
        verdict = ("met" if speed >= 30 and ratio <= 3 else "MISSED") if targeted else "-"
        print(f"{label:<42} {k:>5} {n:>9,} {speed:>10.1f} {cells / t_numpy / 1e6:>10.1f} {ratio:>6.2f}  {verdict}")


if __name__ == "__main__":
    main()
