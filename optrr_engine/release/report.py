"""Readable, self-contained HTML reports of a release, in two versions (as sdcApp does):

- external (``OUTPUT.report.html``, sent with the release): rendered from the manifest alone, so it says
  nothing the manifest does not (nothing about the raw file);
- internal (``OUTPUT.TAG.STAMP.internal-report.html``, kept by the hospital beside its audit record): the same plus
  the input file, its hash, the rows left out, the dropped columns, the key fingerprint and the privacy
  ledger of every release of the same source.
"""

from __future__ import annotations

import html
import os

from ..tolerance import eps_equal

_STYLE = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:60em;padding:0 1em;
color:#1d1d1f;line-height:1.45}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;
vertical-align:top}th{background:#f3f3f3}.num{text-align:right;font-variant-numeric:tabular-nums}
.warn{background:#fff4e5;border-left:4px solid #f0a020;padding:.5em 1em}.small{color:#555;font-size:.9em}
.danger{background:#fde8e8;border-left-color:#c00}
code{font-size:.9em;word-break:break-all}
"""


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _num(x, digits: int = 6) -> str:
    return f"{x:.{digits}g}" if isinstance(x, (int, float)) and not isinstance(x, bool) else _e(x)


def _categories(cats: list, limit: int = 12) -> str:
    shown = ", ".join(_e(c) for c in cats[:limit])
    return shown + (f", … ({len(cats)} in all)" if len(cats) > limit else "")


def _whole_record_target(m: dict) -> float | None:
    """The whole-record epsilon the configuration asked for (target_total: total-budget mode or a sampling
    design), or None when it asked for per-column epsilons."""
    design = m.get("design") or {}
    for source in (design.get("budget") or {}, design.get("info") or {}):
        if isinstance(source.get("target_total"), (int, float)):
            return float(source["target_total"])
    return None


def _asked_per_column(m: dict) -> bool:
    """True when the configuration gave per-column epsilons (the only case with a per-column request)."""
    return _whole_record_target(m) is None and (m.get("mechanism") or {}).get("kind") != "sampling"


def _attribute_header(m: dict) -> str:
    if _asked_per_column(m):
        requested = "<th>Requested ε</th>"
    elif (m.get("design") or {}).get("epsilon_changes"):
        requested = "<th>Share of the target ε</th>"
    else:
        requested = ""
    return (
        f"<tr><th>Column</th><th>Type</th><th>Categories</th>{requested}<th>Achieved ε</th>"
        "<th>Category labels</th></tr>"
    )


def _attribute_rows(m: dict) -> str:
    # per-column request: the column's own epsilon; total-budget mode: its share of the target, shown only when
    # an achieved epsilon differs from it; sampling designs: no per-column request at all
    show_requested = _asked_per_column(m) or bool((m.get("design") or {}).get("epsilon_changes"))
    rows = []
    for a in m["attributes"]:
        req, ach = a["requested_epsilon"], a["achieved_epsilon"]
        flag = ""
        if (
            show_requested
            and isinstance(req, (int, float))
            and isinstance(ach, (int, float))
            and not eps_equal(ach, req)
        ):
            flag = " (raised: weaker privacy)" if ach > req else " (lowered: more privacy)"
        requested = f"<td class=num>{_num(req)}</td>" if show_requested else ""
        rows.append(
            f"<tr><td>{_e(a['name'])}</td><td>{_e(a.get('type', ''))}</td><td class=num>{len(a['categories'])}</td>"
            f"{requested}<td class=num>{_num(ach)}{_e(flag)}</td>"
            f"<td class=small>{_categories(a['categories'])}</td></tr>"
        )
    return "".join(rows)


def _requested_row(m: dict) -> str:
    """What the configuration asked for: the sum of the per-column epsilons, or the whole-record target."""
    target = _whole_record_target(m)
    if _asked_per_column(m):
        total = _num(m.get("sum_requested_epsilons", ""))
        return f"<tr><th>Sum of requested epsilons</th><td class=num>{total}</td></tr>"
    if target is None:  # a sampling design without its target (older manifests): no request to show
        return ""
    # The same words whatever the configuration held (older manifests' "ignored_column_epsilons" is not read): what
    # a data manager's configuration carried besides the target is the data manager's matter, not the recipient's.
    return (
        f"<tr><th>Requested</th><td>whole-record epsilon <span class=num>{_num(target)}</span> (a target for the "
        "whole record; the design sets each column's epsilon)</td></tr>"
    )


def _budget_text(budget: dict, achieved: float) -> str:
    """The total-budget paragraph: the target and the scale of the weights, or, for a mechanism given in the
    configuration, the whole-record epsilon it achieves (``achieved``: the manifest's overall_epsilon, checked
    against its mechanism) against the target (and a scale only if it has one)."""
    from ..budget import REL_GAP

    target = float(budget["target_total"])
    scale = budget.get("scale")
    scaled = f"weights scaled by {_num(scale)}" if isinstance(scale, (int, float)) and scale else ""
    text = f"Total-budget mode: target whole-record epsilon {_num(target)}"
    if budget.get("mechanism") is None:
        return f"{text}{', ' + scaled if scaled else ''}."
    where = "at" if eps_equal(achieved, target, REL_GAP) else "below" if achieved < target else "ABOVE"
    shares = f"; its column epsilons are the {scaled}" if scaled else ""
    return (
        f"{text}. The mechanism was given in the configuration and used unchanged (not designed again from the "
        f"weights; every epsilon is recomputed from it): its whole-record epsilon {_num(achieved)} is {where} the "
        f"target{shares}."
    )


def _column_epsilon_text(m: dict) -> str:
    """What a column's achieved epsilon bounds, and what it does not (docs/sampling.md, "What eps_i bounds")."""
    overall = _num(m["overall_epsilon"], 4)
    text = (
        "It is the epsilon of the channel of that attribute alone: it bounds what the column's released value, "
        "taken by itself, reveals about that attribute. It does not bound what the whole released row reveals to "
        "an attacker who knows (or partly knows) the record's other attributes: any change of one record, "
        "including a change of this attribute alone with all the others known, is bounded by the whole-record "
        f"epsilon ({overall}), which can be larger than the column's ε."
    )
    mech = m.get("mechanism") or {}
    method = mech.get("method") if mech.get("kind") == "sampling" else None
    if method == "rsfd":
        text += (
            " With RS+FD a row holds one randomized true value and uniform fake values in the other columns, and which"
            " one is real is not marked; the column's ε counts the fakes as noise, which is exactly right only for an "
            "attacker to whom every category of the record's other attributes looks equally likely. One who knows "
            "them, or only that some of their values are commoner than others (published statistics are enough), "
            "can tell the fakes from the real value better and learns more about this attribute than the column's ε, "
            "never more than the whole-record epsilon. The per-attribute ε of the RS+FD paper (Arcolezi et al. 2021) "
            "is meant for that case (one attribute changed, the others known) and is not the column's ε either."
        )
    elif method == "smp":
        text += (
            " With SMP a row reports one column, randomized at the whole-record epsilon, and marks the others "
            "“not reported”; a column's channel is that randomized value or “not reported”, so its ε equals the "
            "whole-record epsilon (0 for a column of weight 0, never reported)."
        )
    elif method is not None:
        text += (
            " With a sampling design a column's ε is that of its randomized value or “not reported”, averaged over the"
            " sets of columns the rows report; a row also shows which other columns it reports, so the whole row can "
            "reveal somewhat more about this attribute than the column's ε even to an attacker who knows nothing else "
            "about the record, and, to one who knows the other reported attributes, up to the whole-record epsilon."
        )
    return f"<p class=small><b>What a column's achieved ε bounds.</b> {_e(text)}</p>"


def _randomness_text(m: dict) -> str:
    r = m.get("randomness") or {}
    source = r.get("source")
    if source == "insecure-test-seed":
        return f"<b>test seed {_e(r.get('test_seed'))}: NOT PRIVATE</b>"
    if source == "secret-key":
        return f"{_e(r.get('generator', ''))}, keyed by the releasing organisation's secret key"
    return f"{_e(r.get('generator', ''))}, keyed from the operating system's entropy (recorded nowhere)"


def recipient_notes(notes) -> list:
    """A manifest's design notes the recipient is told: all but the warnings about the data manager's configuration
    that manifests made before OptRR kept them out carry (:data:`.design_step.IGNORED_EPSILONS`)."""
    from .design_step import IGNORED_EPSILONS

    return [n for n in notes or [] if n not in IGNORED_EPSILONS.values()]


def _warnings(m: dict) -> list[str]:
    from .bins import DATA_BIN_METHODS
    from .manifest import noise_attributes

    design = m.get("design", {})
    warnings = []
    if (m.get("randomness") or {}).get("private") is False:
        warnings.append(
            "<b>NOT PRIVATE: this release was made with a test seed.</b> Anyone who finds the seed can undo the "
            "randomization record by record. Never share it outside a test."
        )
    if m.get("kept_columns"):
        kept = ", ".join(_e(c) for c in m["kept_columns"])
        warnings.append(
            f"Columns copied <b>unchanged, without any privacy protection</b>: {kept}. The epsilons below "
            "protect only the randomized attributes."
        )
    if design.get("epsilon_changes"):
        asked = "the request" if _asked_per_column(m) else "the column's share of the whole-record target"
        warnings.append(f"Some achieved epsilons differ from {asked}; the table shows both.")
    for note in recipient_notes(design.get("notes", [])):
        warnings.append(_e(note))
    attrs = m.get("attributes", [])
    noise = noise_attributes(attrs)
    if noise:
        warnings.append(
            f"Released as pure noise (epsilon 0; no needed table uses them): {', '.join(_e(n) for n in noise)}. "
            "Their values are drawn at random, independently of the data: do not analyse them."
        )
    derived = [c for c in m.get("codebook") or [] if (c.get("bins") or {}).get("method") in DATA_BIN_METHODS]
    if derived:
        names = ", ".join(f"{_e(c['name'])} ({_e(c['bins']['method'].replace('_', ' '))})" for c in derived)
        warnings.append(
            f"The bin edges of {names} were computed from the data and rounded to two significant digits; they "
            "describe the data and are published as they are, outside the epsilons."
        )
    return warnings


def _page(title: str, intro: str, warnings: list[str], body: str) -> str:
    warn_html = "".join(f'<p class="warn{" danger" if "NOT PRIVATE" in w else ""}">{w}</p>' for w in warnings)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>
<style>{_STYLE}</style></head><body>
<h1>{_e(title)}</h1>
{intro}
{warn_html}
{body}
</body></html>
"""


def _privacy_and_attributes(m: dict) -> str:
    from .risk import record_sentence

    design = m.get("design", {})
    budget = design.get("budget")
    budget_html = f"<p>{_e(_budget_text(budget, float(m['overall_epsilon'])))}</p>" if budget else ""
    return f"""<h2>Privacy</h2>
<table>
<tr><th>Whole-record epsilon</th><td class=num>{_num(m["overall_epsilon"])}</td></tr>
<tr><th>What it means</th><td>{_e(record_sentence(float(m["overall_epsilon"])))}</td></tr>
{_requested_row(m)}
<tr><th>Design method</th><td>{_e(design.get("method", m["mechanism"].get("method", "")))}
 (requested: {_e(design.get("method_requested", ""))})</td></tr>
<tr><th>Random numbers</th><td>{_randomness_text(m)}</td></tr>
</table>
{budget_html}
<h2>Attributes</h2>
<table>{_attribute_header(m)}
{_attribute_rows(m)}
</table>
{_column_epsilon_text(m)}"""


_INTRO = """<p>Each record was randomized with randomized response (local differential privacy). Lower epsilon means
more privacy. The whole-record epsilon bounds what the release reveals about any one record's perturbed
attributes taken together.</p>"""


def render_report(manifest: dict) -> str:
    """The external report, sent with the release: rendered from the manifest alone."""
    m = manifest
    out = m.get("output", {})
    body = f"""{_privacy_and_attributes(m)}
<h2>File</h2>
<table>
<tr><th>Release</th><td>{_e(out.get("file", ""))} ({_e(out.get("format", ""))})<br>
<code>SHA-256 {_e(m["output_sha256"])}</code></td></tr>
<tr><th>Records</th><td class=num>{m["rows"]:,}</td></tr>
<tr><th>Record order shuffled</th><td>{"yes" if m["shuffled"] else "no"}</td></tr>
<tr><th>Created</th><td>{_e(m.get("created", ""))} by OptRR {_e(m.get("tool", {}).get("version", ""))}</td></tr>
</table>
<p class=small>The manifest beside this report holds the full mechanism, the codebook and the bins; receivers
need it to estimate the true distributions (<code>optrr estimate</code>).</p>"""
    return _page(f"OptRR release report: {out.get('file', '')}", _INTRO, _warnings(m), body)


def render_internal_report(manifest: dict, entry: dict, history: list[dict]) -> str:
    """The internal report, kept by the hospital: the external one plus the raw file, the rows left out, the
    dropped columns, the key fingerprint and the ledger of every release of this source."""
    from .audit import ACCUMULATED_NOTE, accumulated_epsilon

    m = manifest
    inp, files, rnd = entry.get("input", {}), entry.get("files", {}), entry.get("randomness", {})
    warnings = _warnings(m)
    warnings += [_e(w[0].upper() + w[1:]) + "." for w in entry.get("config_warnings") or []]
    if entry.get("rows_excluded"):
        by = ", ".join(f"{_e(k)}: {v:,}" for k, v in entry.get("rows_excluded_by_column", {}).items())
        warnings.append(f"{entry['rows_excluded']:,} input rows with missing values were left out ({by}).")
    from .perturb import order_runs_warning

    runs = order_runs_warning(entry.get("order_in_runs") or [])
    if runs:
        warnings.append(_e(runs[0].upper() + runs[1:]) + ".")
    unlisted = entry.get("unlisted_values_as_missing") or {}
    if unlisted:
        by = ", ".join(f"{_e(k)}: {v:,}" for k, v in unlisted.items())
        warnings.append(f"Cells not among the approved categories, released as missing ({by}).")
    if len(history) > 1:
        warnings.append(
            f"This source has been released {len(history)} times; together they cost an accumulated whole-record "
            f"epsilon of {_num(accumulated_epsilon(history))} ({ACCUMULATED_NOTE})."
        )
    ledger = "".join(
        f"<tr><td>{_e(r.get('created', ''))}</td><td>{_e((r.get('files') or {}).get('release', ''))}</td>"
        f"<td class=num>{_num(r.get('overall_epsilon', ''))}</td>"
        f"<td class=num>{_num(accumulated_epsilon(history[: i + 1]))}</td></tr>"
        for i, r in enumerate(history)
    )
    dropped = ", ".join(_e(c) for c in entry.get("dropped_columns", [])) or "none"
    fingerprint = rnd.get("key_fingerprint")
    body = f"""{_privacy_and_attributes(m)}
<h2>Files</h2>
<table>
<tr><th>Input</th><td>{_e(inp.get("path", ""))} ({_e(inp.get("format", ""))}, {inp.get("bytes", 0):,} bytes)<br>
<code>SHA-256 {_e(inp.get("sha256", ""))}</code></td></tr>
<tr><th>Release</th><td>{_e(files.get("release", ""))}<br><code>SHA-256 {_e(m["output_sha256"])}</code></td></tr>
<tr><th>Sent with it</th><td>{_e(files.get("manifest", ""))}<br>{_e(files.get("report", ""))}</td></tr>
<tr><th>Records</th><td class=num>{m["rows"]:,} released of {entry.get("rows_read", m["rows"]):,} read</td></tr>
<tr><th>Dropped columns</th><td>{dropped}</td></tr>
<tr><th>Key fingerprint</th><td>{_e(fingerprint) if fingerprint else "no key (not reproducible)"}</td></tr>
<tr><th>Created</th><td>{_e(m.get("created", ""))} by OptRR {_e(m.get("tool", {}).get("version", ""))}</td></tr>
</table>
<h2>Privacy ledger of this source</h2>
<table><tr><th>Released</th><th>File</th><th>Whole-record ε</th><th>Accumulated ε</th></tr>{ledger}</table>
<p class=small>INTERNAL: this report names the hospital's file and its hash; never send it with the release
(send the release, its manifest and <code>{_e(os.path.basename(files.get("report", "")))}</code>).</p>"""
    title = f"OptRR internal release report: {m.get('output', {}).get('file', '')}"
    return _page(title, _INTRO, warnings, body)
