"""``optrr analyze``: a chi-square test of association between two attributes of a release."""

from __future__ import annotations

import sys


def add_parser(sub):
    p = sub.add_parser("analyze", help="test the association of two attributes of a release (chi-square)")
    from .common import NAMES_HELP, add_release_arguments

    add_release_arguments(p)
    p.add_argument("--chi2", required=True, help=f"the two attributes (e.g. allele,status): {NAMES_HELP}")
    return p


def run(args) -> int:
    from ..analysis.chi_square import format_p_value
    from ..analysis.release_chi2 import TEST_WARNINGS, chi2_release, json_report
    from .common import open_named_release, print_json, shown_name, warn_not_private
    from .release_hints import release_hints

    with release_hints(args):
        names, opened = open_named_release(args, args.chi2, "--chi2")
        out = chi2_release(args.release, names, opened=opened)
    warn_not_private(out.get("not_private"))
    if args.json:
        print_json(json_report(out))
        return 0
    a, b = out["attributes"]
    cats = out["table"]["categories"]
    total = out["rows_in_release"]
    rows = f"{out['rows']:,} rows" + (f" of {total:,}" if out["rows"] != total else "")
    what = [f"{shown_name(n)} ({len(c)} categories)" for n, c in zip((a, b), cats, strict=True)]
    print(f"association of {what[0]} and {what[1]}, {rows}")
    for key in TEST_WARNINGS:
        if out.get(key):
            print(f"optrr: warning: {out[key]}", file=sys.stderr)
    print("H0: the two attributes are independent in the true (unperturbed) data")
    for t in out["tests"]:
        mark = "  (recommended)" if t["test"] == out["recommended"] else ""
        chi2 = "not computable" if t["statistic"] is None else f"{t['statistic']:.6g}"
        print(f"- {t['test']}{mark}: chi2 = {chi2}, df = {t['dof']}, p = {format_p_value(t['p_value'])}")
        if t.get("p_value_method"):
            print(f"    p-value: {t['p_value_method']}")
        print(f"    assumes: {t['assumes']}")
    if out.get("power"):
        print(out["power"]["statement"])
    return 0
