"""Review of the CLI's error messages: each names what is actually wrong and the way out.

1. method family on epsilons its family cannot reach: the error names the methods that can (auto, optimal).
2. a binary file (NUL bytes) given with a configuration's encoding: the same "not a text file" error as schema,
   not a missing column; estimate and analyze say it too.
3. missing_values texts that occur in a column without empty cells, its missing-value category not listed: the
   error names those texts, not "empty cells".
4. a named pipe as input: "not a regular file", not "is empty".
5. a key file holding a key written by hand (all zeros): refused, pointing to optrr keygen.

Each case runs the real ``optrr`` entry point in-process on files made in a fresh folder.
"""

import json
import os

import pytest

from optrr_engine.cli.main import main
from optrr_engine.errors import InputError

ROWS = b"A,B,C,D\n" + b"x,x,y,y\ny,x,x,y\nx,y,y,x\ny,y,x,x\n" * 15
#: the first bytes of a PNG image (a picture renamed .csv)
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x06\x00\x00\x00" + bytes(range(256))


def config(epsilons=(1.0, 1.0, 1.0, 1.0), method="kronecker", **column_d) -> dict:
    """A release configuration of ROWS' four columns (categories x, y); ``column_d``: more fields of column D."""
    columns = [
        {"name": n, "role": "perturb", "epsilon": e, "categories": ["x", "y"]}
        for n, e in zip("ABCD", epsilons, strict=True)
    ]
    columns[3].update(column_d)
    return {"method": method, "input": {"delimiter": ",", "encoding": "utf-8"}, "columns": columns}


def write(folder, name, data) -> str:
    path = os.path.join(folder, name)
    with open(path, "wb") as fh:
        fh.write(data if isinstance(data, bytes) else json.dumps(data).encode())
    return path


def run(capsys, *args) -> tuple[int, str]:
    """(exit code, stderr) of ``optrr ARGS``."""
    code = main([str(a) for a in args])
    return code, capsys.readouterr().err


def perturb(capsys, folder, data: str, cfg: dict, *more) -> tuple[int, str]:
    out = os.path.join(folder, "out.csv")
    return run(capsys, "perturb", data, "--config", write(folder, "cfg.json", cfg), "-o", out, "--quiet", *more)


def test_family_out_of_reach_names_the_methods_that_reach_the_epsilons(tmp_path, capsys):
    data = write(tmp_path, "d.csv", ROWS)
    code, err = perturb(capsys, tmp_path, data, config((0.5, 0.5, 0.5, 3.0), method="family"))
    assert code == 2 and "infeasible for these eps_i" in err
    assert "choose the method auto or optimal" in err and "raise the smallest epsilons" in err
    auto = write(tmp_path, "auto.json", config((0.5, 0.5, 0.5, 3.0), method="auto"))
    code, err = run(capsys, "design", "--config", auto)  # the way out works
    assert code == 0, err


def test_binary_file_is_refused_as_binary_by_every_command(tmp_path, capsys):
    """The configuration gives the encoding, so nothing is detected: the NUL bytes are still noticed."""
    from optrr_engine.io.readers import ReaderOptions, open_source

    picture = write(tmp_path, "picture.csv", PNG)
    code, err = perturb(capsys, tmp_path, picture, config())
    assert code == 2 and "picture.csv is not a text file (it contains NUL bytes)" in err
    assert "is not in" not in err
    code, err = run(capsys, "schema", picture, "-o", tmp_path / "schema.json")
    assert code == 2 and "picture.csv is not a text file (it contains NUL bytes)" in err
    with pytest.raises(InputError, match="contains NUL bytes"):
        open_source(picture, ReaderOptions(encoding="cp1252", delimiter=","))
    # a release replaced by the picture: estimate and analyze say the same
    release = tmp_path / "release.csv"
    code, err = perturb(capsys, tmp_path, write(tmp_path, "d.csv", ROWS), config(), "--allow-rare-categories")
    assert code == 0, err
    os.replace(tmp_path / "out.csv", release)
    os.replace(tmp_path / "out.csv.manifest.json", tmp_path / "release.csv.manifest.json")
    release.write_bytes(PNG)
    for args in (("estimate", "--marginal", "A"), ("analyze", "--chi2", "A,B")):
        code, err = run(capsys, args[0], release, "--no-hash-check", *args[1:])
        assert code == 2 and "release.csv is not a text file (it contains NUL bytes)" in err
    # UTF-16 text holds NUL bytes: with its encoding given, it is read
    utf16 = write(tmp_path, "wide.csv", "a,b\nx,p\ny,q\n".encode("utf-16-le"))
    assert open_source(utf16, ReaderOptions(encoding="utf-16-le")).names == ["a", "b"]


def test_missing_values_without_empty_cells_name_the_texts_that_occur(tmp_path, capsys):
    data = write(tmp_path, "d.csv", ROWS.replace(b",y\n", b",?\n"))  # column D: x and ?; no empty cell
    code, err = perturb(capsys, tmp_path, data, config(missing_values=["?"]), "--allow-rare-categories")
    assert code == 2
    assert "column 'D' has missing values ('?', listed in its missing_values) but 'NA', its missing-value" in err
    assert "empty cells" not in err
    assert "add 'NA' to its categories or set its missing to exclude" in err
    assert "take '?' out of missing_values" in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_named_pipe_is_not_a_regular_file(tmp_path, capsys):
    pipe = tmp_path / "pipe.csv"
    os.mkfifo(pipe)
    for args in (("schema", pipe, "-o", tmp_path / "schema.json"), ("perturb", pipe, "-o", tmp_path / "out.csv")):
        cfg = ("--config", write(tmp_path, "cfg.json", config())) if args[0] == "perturb" else ()
        code, err = run(capsys, *args, *cfg)
        assert code == 2 and f"input file {pipe} is not a regular file" in err
        assert "data files must be regular files" in err and "is empty" not in err


def test_key_without_randomness_is_refused(tmp_path, capsys):
    from optrr_engine.release.randomness import generate_key_file, read_key_file

    zeros = write(tmp_path, "zk.key", f"optrr-key-1 {0:064d}\n".encode())
    os.chmod(zeros, 0o600)
    code, err = perturb(capsys, tmp_path, write(tmp_path, "d.csv", ROWS), config(), "--key-file", zeros)
    assert code == 2 and "zk.key holds a key that is obviously not random" in err and "optrr keygen" in err
    assert not os.path.exists(tmp_path / "out.csv")
    pattern = write(tmp_path, "pattern.key", ("optrr-key-1 " + "0123456789abcdef" * 4 + "\n").encode())
    with pytest.raises(InputError, match="not random"):
        read_key_file(pattern)  # 8 distinct byte values of 32
    generate_key_file(tmp_path / "good.key")
    assert len(read_key_file(tmp_path / "good.key")) == 32


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_release_data_file_that_is_a_named_pipe_is_refused_not_hashed(tmp_path):
    """estimate and analyze hash the release's data file first: a named pipe there would wait forever."""
    from optrr_engine.release.manifest import check_data_hash

    pipe = tmp_path / "release.csv"
    os.mkfifo(pipe)
    with pytest.raises(InputError, match="is not a regular file"):
        check_data_hash({"output_sha256": "0" * 64}, tmp_path / "release.manifest.json", data_path=pipe)


def test_the_repeat_message_says_a_keyed_reproduction_adds_nothing():
    """An attacker review: the refusal said any further release adds its epsilon, but the same key and configuration
    give the byte-identical release, which the ledger counts once."""
    from optrr_engine.release.audit import repeat_message

    previous = [{"created": "2026-11-27", "input": {"file": "in.csv"}, "overall_epsilon": 2.0}]
    message = repeat_message(previous, 2.0)
    assert "another release with fresh noise brings the accumulated whole-record epsilon to 4" in message
    assert "a reproduction with the same key and configuration repeats the same noise and adds nothing" in message
