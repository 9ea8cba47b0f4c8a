"""A readable, self-contained HTML report of a release, rendered from its manifest (nothing else)."""

from __future__ import annotations

import html

from ..tolerance import eps_equal

_STYLE = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:60em;padding:0 1em;
color:#1d1d1f;line-height:1.45}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;
vertical-align:top}th{background:#f3f3f3}.num{text-align:right;font-variant-numeric:tabular-nums}
.warn{background:#fff4e5;border-left:4px solid #f0a020;padding:.5em 1em}.small{color:#555;font-size:.9em}
code{font-size:.9em;word-break:break-all}
"""


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _num(x, digits: int = 6) -> str:
    return f"{x:.{digits}g}" if isinstance(x, (int, float)) and not isinstance(x, bool) else _e(x)


def _categories(cats: list, limit: int = 12) -> str:
    shown = ", ".join(_e(c) for c in cats[:limit])
    return shown + (f", … ({len(cats)} in all)" if len(cats) > limit else "")


def render_report(manifest: dict) -> str:
    m = manifest
    inp, out, design = m.get("input", {}), m.get("output", {}), m.get("design", {})
    rows = []
    for a in m["attributes"]:
        req, ach = a["requested_epsilon"], a["achieved_epsilon"]
        flag = ""
        if isinstance(req, (int, float)) and isinstance(ach, (int, float)) and not eps_equal(ach, req):
            flag = " (raised: weaker privacy)" if ach > req else " (lowered: more privacy)"
        rows.append(
            f"<tr><td>{_e(a['name'])}</td><td>{_e(a.get('type', ''))}</td><td class=num>{len(a['categories'])}</td>"
            f"<td class=num>{_num(req)}</td><td class=num>{_num(ach)}{_e(flag)}</td>"
            f"<td class=small>{_categories(a['categories'])}</td></tr>"
        )
    warnings = []
    if m.get("kept_columns"):
        kept = ", ".join(_e(c) for c in m["kept_columns"])
        warnings.append(
            f"Columns copied <b>unchanged, without any privacy protection</b>: {kept}. The epsilons below "
            "protect only the randomized attributes."
        )
    if design.get("epsilon_changes"):
        warnings.append("Some achieved epsilons differ from the request; the table shows both.")
    for note in design.get("notes", []):
        warnings.append(_e(note))
    if m.get("rows_excluded"):
        by = ", ".join(f"{_e(k)}: {v:,}" for k, v in m.get("rows_excluded_by_column", {}).items())
        warnings.append(f"{m['rows_excluded']:,} input rows with missing values were left out ({by}).")
    warn_html = "".join(f'<p class="warn">{w}</p>' for w in warnings)
    budget = design.get("budget")
    budget_html = ""
    if budget:
        budget_html = (
            f"<p>Total-budget mode: target whole-record epsilon {_num(budget['target_total'])}, "
            f"weights scaled by {_num(budget['scale'])}.</p>"
        )
    dropped = ", ".join(_e(c) for c in m.get("dropped_columns", [])) or "none"
    seeded = "yes (the seed is " + ("recorded in the manifest)" if "seed" in m else "not recorded)")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>OptRR release report: {_e(out.get("file", ""))}</title>
<style>{_STYLE}</style></head><body>
<h1>Release report: {_e(out.get("file", ""))}</h1>
<p>Each record was randomized with randomized response (local differential privacy). Lower epsilon means
more privacy. The whole-record epsilon bounds what the release reveals about any one record's perturbed
attributes taken together.</p>
{warn_html}
<h2>Privacy</h2>
<table>
<tr><th>Whole-record epsilon</th><td class=num>{_num(m["overall_epsilon"])}</td></tr>
<tr><th>Sum of requested epsilons</th><td class=num>{_num(m.get("sum_requested_epsilons", ""))}</td></tr>
<tr><th>Design method</th><td>{_e(design.get("method", m["mechanism"].get("method", "")))}
 (requested: {_e(design.get("method_requested", ""))})</td></tr>
</table>
{budget_html}
<h2>Attributes</h2>
<table><tr><th>Column</th><th>Type</th><th>Categories</th><th>Requested ε</th><th>Achieved ε</th>
<th>Category labels</th></tr>
{"".join(rows)}
</table>
<h2>Files</h2>
<table>
<tr><th>Input</th><td>{_e(inp.get("file", ""))} ({_e(inp.get("format", ""))})<br>
<code>SHA-256 {_e(m["input_sha256"])}</code></td></tr>
<tr><th>Release</th><td>{_e(out.get("file", ""))} ({_e(out.get("format", ""))})<br>
<code>SHA-256 {_e(m["output_sha256"])}</code></td></tr>
<tr><th>Records</th><td class=num>{m["rows"]:,} released of {m.get("rows_read", m["rows"]):,} read</td></tr>
<tr><th>Record order shuffled</th><td>{"yes" if m["shuffled"] else "no"}</td></tr>
<tr><th>Fixed random seed</th><td>{seeded if m["seeded"] else "no (operating-system randomness)"}</td></tr>
<tr><th>Dropped columns</th><td>{dropped}</td></tr>
<tr><th>Created</th><td>{_e(m.get("created", ""))} by OptRR {_e(m.get("tool", {}).get("version", ""))}</td></tr>
</table>
<p class=small>The manifest beside this report holds the full mechanism, the codebook and the bins; receivers
need it to estimate the true distributions (<code>optrr estimate</code>).</p>
</body></html>
"""
