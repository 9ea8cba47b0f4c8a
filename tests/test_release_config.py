"""The release configuration: JSON keys, round trips and one-line validation errors naming the column."""

import json
import math

import pytest

from optrr_engine.errors import InputError
from optrr_engine.release.config import ColumnConfig, ReleaseConfig, load_config, save_config


def example() -> dict:
    return {
        "method": "auto",
        "target_total": None,
        "columns": [
            {"name": "id", "role": "drop"},
            {"name": "sex", "role": "perturb", "type": "nominal", "epsilon": 1.0, "categories": ["F", "M", "NA"]},
            {
                "name": "age",
                "role": "perturb",
                "type": "numeric",
                "epsilon": 0.5,
                "bins": {"method": "edges", "edges": ["-inf", 30, 60, "inf"]},
                "categories": ["?"],
                "missing": "exclude",
            },
            {"name": "site", "role": "keep"},
        ],
    }


def test_round_trip_keeps_every_key(tmp_path):
    cfg = ReleaseConfig.from_dict(example())
    assert [c.name for c in cfg.perturbed()] == ["sex", "age"] and [c.name for c in cfg.kept()] == ["site"]
    assert cfg.column("age").bins["edges"] == [-math.inf, 30.0, 60.0, math.inf]
    path = tmp_path / "release.json"
    save_config(cfg, path)
    raw = json.loads(path.read_text())
    assert raw["method"] == "auto" and raw["target_total"] is None
    age = raw["columns"][2]
    assert age["bins"]["edges"] == ["-inf", 30.0, 60.0, "inf"] and age["missing"] == "exclude"
    assert raw["columns"][1]["epsilon"] == 1.0 and raw["columns"][1]["categories"] == ["F", "M", "NA"]
    again = load_config(path)
    assert again.to_dict() == cfg.to_dict()


def test_gui_style_objects_and_bins_as_a_list():
    col = ColumnConfig(name="bmi", role="perturb", type="numeric", epsilon=1.0, weight=1.0, bins=[0, 18.5, 25, "inf"])
    assert col.bins == {"method": "edges", "edges": [0.0, 18.5, 25.0, math.inf]}
    cfg = ReleaseConfig(method="recommended", columns=[col]).validate()
    assert cfg.method == "auto"


def test_budget_mode_uses_weights():
    d = example()
    d["target_total"] = 3.0
    for c in d["columns"]:
        c.pop("epsilon", None)
    d["columns"][1]["weight"] = 2
    cfg = ReleaseConfig.from_dict(d)
    assert cfg.budget_mode and cfg.column("sex").weight == 2.0 and cfg.column("age").weight == 1.0


@pytest.mark.parametrize(
    ("edit", "pattern"),
    [
        (lambda d: d["columns"][1].update(epsilon=0), "'sex': epsilon is 0; it must be greater than 0"),
        (lambda d: d["columns"][1].update(epsilon=-1.5), "'sex': epsilon is -1.5"),
        (lambda d: d["columns"][1].update(epsilon=float("nan")), "'sex': epsilon is NaN"),
        (lambda d: d["columns"][1].update(epsilon=1e6), "'sex': epsilon is 1e\\+06; at most 50 is accepted"),
        (
            lambda d: d["columns"][1].update(epsilon=float("inf")),
            "'sex': epsilon is inf; it must be a finite positive number",
        ),
        (lambda d: d["columns"][1].update(epsilon="high"), "'sex': epsilon must be a number"),
        (lambda d: d["columns"][1].update(epsilon=True), "'sex': epsilon must be a number"),
        (lambda d: d["columns"][1].pop("epsilon"), "'sex' is perturbed but has no epsilon"),
        (lambda d: d["columns"][1].update(role="hide"), "'sex': role 'hide' is unknown"),
        (lambda d: d["columns"][1].update(type="text"), "'sex': type 'text' is unknown"),
        (lambda d: d["columns"][1].update(missing="drop"), "'sex': missing 'drop' is unknown"),
        (lambda d: d["columns"][1].update(categories=["F", "F"]), "'sex': categories lists 'F' twice"),
        (lambda d: d["columns"][1].update(categories=[1, 2]), "'sex': categories must be texts"),
        (lambda d: d["columns"][1].update(categories=[]), "'sex' is perturbed but lists no categories"),
        (lambda d: d["columns"][1].update(epsilion=1), "'sex': unknown key 'epsilion'"),
        (lambda d: d["columns"][2].update(bins={"edges": [0, 1]}), "'age': give at least 3 bin edges"),
        (lambda d: d["columns"][2].update(bins={"edges": [0, 5, 2]}), "'age': bin edges must be strictly"),
        (lambda d: d["columns"][2].update(bins={"edges": [0, "x", 2]}), "'age': bin edge 'x' is not a number"),
        (lambda d: d["columns"][2].update(bins={"method": "kmeans"}), "'age': bins method 'kmeans' is unknown"),
        (lambda d: d["columns"][2].update(bins={"method": "quantile", "count": 1}), "'age': bins count must be"),
        (lambda d: d["columns"][2].pop("bins"), "'age' is numeric but has no bins"),
        (lambda d: d["columns"].append({"name": "sex", "role": "drop"}), "'sex' appears twice"),
        (lambda d: d.update(method="magic"), "method 'magic' is unknown"),
        (lambda d: d.update(target_total=-2), "target_total is -2"),
        (lambda d: d.update(target_total=float("nan")), "target_total is nan"),
        (lambda d: d.update(target_total=0), "target_total is 0; it must be a finite positive number"),
        (lambda d: d.update(target_total="four"), "target_total must be a number; got 'four'"),
        (lambda d: d.update(target_total=True), "target_total must be a number; got True"),
        (
            lambda d: (d.update(target_total=2), d["columns"][1].update(weight=-1)),
            "'sex': weight is -1; it must be a finite positive number",
        ),
        (
            lambda d: (d.update(target_total=2), d["columns"][1].update(weight=float("inf"))),
            "'sex': weight is inf; it must be a finite positive number",
        ),
        (lambda d: (d.update(target_total=2), d["columns"][1].update(weight="x")), "'sex': weight must be a number"),
        (lambda d: d.update(colums=[]), "unknown key 'colums'"),
        (lambda d: d.update(version=99), "newer than this OptRR reads"),
        (lambda d: d.pop("columns"), "needs a 'columns' list"),
    ],
)
def test_validation_errors_are_one_line_and_name_the_column(edit, pattern):
    d = example()
    edit(d)
    with pytest.raises(InputError, match=pattern) as info:
        ReleaseConfig.from_dict(d)
    assert "\n" not in str(info.value)


def test_load_config_errors(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        load_config(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"method": "auto", "columns": [}')
    with pytest.raises(InputError, match="not valid JSON \\(line 1"):
        load_config(bad)
    bad.write_text("[1, 2]")
    with pytest.raises(InputError, match="must be a JSON object"):
        load_config(bad)
    nan = tmp_path / "nan.json"
    nan.write_text('{"columns": [{"name": "a", "role": "perturb", "epsilon": NaN, "categories": ["x", "y"]}]}')
    with pytest.raises(InputError, match="'a': epsilon is NaN"):
        load_config(nan)


def test_what_is_published_outside_epsilon_is_one_rule():
    """Kept columns, rows left out (perturbed columns only: a kept column's missing cells are copied, no row is
    left out, and the recipient must not be told otherwise), labels of a column the schema dropped, bins from data."""
    from optrr_engine.release.config import ColumnConfig, ReleaseConfig
    from optrr_engine.release.schema import DROPPED

    cols = [
        ColumnConfig("id", "perturb", categories=["a", "b"], epsilon=1.0, warnings=[f"likely identifier{DROPPED}"]),
        ColumnConfig("age", "perturb", type="numeric", epsilon=1.0, missing="exclude",
                     bins={"method": "quantile", "count": 2, "edges": [float("-inf"), 40.0, float("inf")]}),
        ColumnConfig("note", "keep", categories=["x", "y"], missing="exclude"),
        ColumnConfig("sex", "perturb", categories=["F", "M"], epsilon=1.0),
    ]
    cfg = ReleaseConfig(method="kronecker", columns=cols)
    assert cfg.published_outside_epsilon() == {
        "kept": ["note"], "rows_left_out": ["age"], "labels_of_dropped": ["id"], "bins_from_data": ["age"],
    }
    assert "missing value in age are left out" in cfg.row_selection_note() and "note" not in cfg.row_selection_note()
