"""``optrr keygen -o hospital.key``: a new secret release key (256 bits, file mode 0600, never overwritten)."""

from __future__ import annotations


def add_parser(sub):
    p = sub.add_parser("keygen", help="make a secret key for reproducible releases (optrr perturb --key-file)")
    p.add_argument("-o", "--output", required=True, metavar="KEY", help="key file to create (never overwritten)")
    return p


def run(args) -> int:
    from ..release.randomness import generate_key_file
    from .common import check_new_file

    # the audit record (even before it exists) and a key are refused here; any other existing file is refused by
    # generate_key_file, which never overwrites (hence force: no "use --force" advice for a key)
    check_new_file(args.output, "key file", force=True)
    fingerprint = generate_key_file(args.output)
    print(
        f"wrote {args.output} (fingerprint {fingerprint}); keep it secret and backed up with the hospital: with it "
        "optrr perturb --key-file reproduces a release exactly, and it must never be sent with a release"
    )
    return 0
