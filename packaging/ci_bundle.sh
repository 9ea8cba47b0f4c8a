#!/usr/bin/env bash
# CI step, run by .ci/run after the unit tests: build the Linux bundle from this checkout, report its size and
# start time (packaging/build.py), and smoke-test the built tarball offline and without Python
# (packaging/smoke_test.py). Needs: pip (PyInstaller from the "packaging" extra), binutils (strip), util-linux
# (unshare), and the few host libraries the bundled Qt loads from the system for offscreen rendering.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet -e ".[packaging]"

# Host libraries the bundle does not carry (OpenGL dispatch and drivers, libxcb, libdrm, Wayland client, fonts).
# They are on the standard image; install them only if this machine lacks them.
LDCONFIG=$(command -v ldconfig || echo /sbin/ldconfig)
need=()
for lib in libEGL.so.1:libegl1 libGL.so.1:libgl1 libGLX.so.0:libglx0 libGLdispatch.so.0:libglvnd0 \
           libdrm.so.2:libdrm2 libwayland-client.so.0:libwayland-client0 libxcb.so.1:libxcb1; do
    "$LDCONFIG" -p | grep -q "${lib%%:*}" || need+=("${lib##*:}")
done
ls /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf >/dev/null 2>&1 || need+=(fonts-dejavu-core fontconfig)
command -v strip >/dev/null || need+=(binutils)
if [ ${#need[@]} -gt 0 ]; then
    echo "installing host packages for the bundle: ${need[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

python3 packaging/build.py --clean
# Isolation (no network, Python installations and the source tree hidden) needs unshare with mount namespaces;
# where a CI sandbox forbids it the test still runs under env -i with decoys, and tags every line NOT ISOLATED.
if unshare --net --mount true 2>/dev/null; then
    python3 packaging/smoke_test.py
else
    echo "WARNING: unshare --net --mount is not permitted here: smoke test without network/mount isolation"
    python3 packaging/smoke_test.py --allow-no-isolation
fi
