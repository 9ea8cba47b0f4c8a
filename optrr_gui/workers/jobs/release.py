"""Jobs of the release dialog: perturb a file and write the release; its checks before the release."""

from __future__ import annotations

import os

from optrr_engine.errors import InputError
from optrr_engine.io.atomic import remove_stale_temporaries
from optrr_engine.release.audit import audit_folder
from optrr_engine.release.perturb import PublishRefusal, perturb_file

from ...state.config_bridge import gui_wording


def needed_marginal_check(mechanism, names, config) -> list:
    """The release's ``design_check``, as ``optrr perturb`` runs it: refuse a design that erases a needed marginal
    (the configuration's ``needed_marginals``) unless ``allow_unidentifiable``; notes for the manifest."""
    from optrr_engine.utility.release_check import check_release

    return check_release(mechanism, names, config.needed_marginals, config.allow_unidentifiable)


def rows_notes(mechanism, names, config, rows: int) -> list:
    """The release's ``rows_check``, as ``optrr perturb`` runs it: needed tables without information at the rows
    released, as notes for the manifest and report. A function of its own (not the engine's function passed as it
    is) so that optrr_engine.utility.release_check is imported in the worker, not when the release dialog loads."""
    from optrr_engine.utility.release_check import release_rows_notes

    return release_rows_notes(mechanism, names, config, rows)


def run_release(input_path, config, output_path, options: dict, progress=None, cancel=None) -> dict:
    """Worker: the engine's perturb_file (``options``: the dialog's choices, passed as they are; its approvals
    ``allow_rare_categories`` and ``allow_flagged_kept`` are the sets its orange list names when ticked, absent: none
    approved); returns {"manifest": the recipient's manifest, "audit": this release's entry of the internal audit
    record, "ledger": every release of the same source (this one last)}. The engine's refusals that name
    command-line steps are worded for the GUI, keeping their type and fields (a PublishRefusal's ``rare`` and
    ``kept``); others, e.g. RepeatReleaseError, pass as raised."""
    try:
        made = _perturb(input_path, config, output_path, options, progress, cancel)
    except InputError as exc:
        text = gui_wording(str(exc))
        if text == str(exc):
            raise
        if isinstance(exc, PublishRefusal):
            raise exc.reworded(text) from None
        raise InputError(text) from None
    return {"manifest": made.manifest, "audit": made.audit_entry, "ledger": made.ledger}


def _perturb(input_path, config, output_path, options: dict, progress, cancel):
    return perturb_file(
        input_path,
        config,
        output_path,
        key_path=options.get("key_file"),
        insecure_test_seed=options.get("seed"),
        developer=options.get("developer"),  # decided in the window's process (its OPTRR_DEVELOPER)
        shuffle=options.get("shuffle", True),
        output_format=options.get("output_format"),
        force=options.get("force", False),
        allow_repeat=options.get("allow_repeat", False),
        allow_rare_categories=options.get("allow_rare_categories", False),
        allow_flagged_kept=options.get("allow_flagged_kept", False),
        allow_identifier_kept=options.get("allow_identifier_kept", False),
        audit_dir=options.get("audit_dir"),
        design_check=needed_marginal_check,
        rows_check=rows_notes,
        progress=progress,
        cancel=cancel,
    )


def remove_release_leftovers(input_path, config, output_path, options: dict) -> None:
    """Parent side, after a release worker that ignored its cancel was terminated (it ran no ``finally``): remove
    the hidden temporaries whose process is gone from the output and audit folders (same arguments as
    :func:`run_release`), so a cancel leaves nothing behind."""
    remove_stale_temporaries(os.path.dirname(os.path.abspath(output_path)))
    remove_stale_temporaries(audit_folder(options.get("audit_dir")))


def needed_table_notes(mechanism, names, needed, rows: int, progress=None, cancel=None) -> list[str]:
    """Job for a worker process (many tables take seconds, with numpy holding the GIL): the notes the release will
    write in its manifest on the ``needed`` tables (lists of names among the perturbed ``names``) that carry almost
    no information at ``rows`` rows with ``mechanism`` (a mechanism or sampling design): the engine's
    :func:`optrr_engine.utility.release_check.uninformative_notes`, the first tables named and the others counted."""
    from optrr_engine.utility.release_check import uninformative_notes

    return uninformative_notes(mechanism, names, needed, rows)


def kept_combination(parts: dict, recodes: dict, progress=None, cancel=None) -> tuple | None:
    """Job for a worker process: the kept columns' combination that ``perturb`` refuses
    (:meth:`optrr_engine.release.perturb.KeptUniqueGuard.combination`: (names, rows whose combination of values no
    other row has, rows)) or None, over the window's rows read. ``parts``: per kept column, in column order, its
    (codes, distinct values) per chunk of rows (the data store's, code -1: missing); ``recodes``: {name: recode}.
    Counted by the engine's guard on every row read: rows a release leaves out for a missing value in a perturbed
    column are not known here (the release counts the rows it releases and says what it finds)."""
    import pyarrow as pa

    from optrr_engine.release.perturb import KeptUniqueGuard
    from optrr_engine.tasks import TaskControl

    ctl = TaskControl(progress, cancel)
    names = list(parts)
    guard = KeptUniqueGuard([], recodes, together=names)
    rows = 0
    for chunk in zip(*parts.values(), strict=False):  # the chunks every column has
        ctl.check()
        guard.add(pa.table({name: _texts(codes, values) for name, (codes, values) in zip(names, chunk, strict=True)}))
        rows += len(chunk[0][0])
    return guard.combination(rows) if rows else None


def _texts(codes, values):
    """A string Arrow array of one chunk of a column from its codes (-1: missing) and distinct values."""
    import numpy as np
    import pyarrow as pa

    codes = np.asarray(codes, dtype=np.int32)
    dictionary = pa.array([str(v) for v in values], type=pa.string())
    return pa.DictionaryArray.from_arrays(pa.array(codes, mask=codes < 0), dictionary).dictionary_decode()
