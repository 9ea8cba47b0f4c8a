#!/usr/bin/env bash
# macOS: turn packaging/dist/OptRR.app (made by PyInstaller from optrr.spec) into packaging/dist/OptRR-VERSION.dmg.
# Called by packaging/build.py on macOS; by hand: bash packaging/macos/make_dmg.sh VERSION
#
# The .app is signed again after build.py has added the licences to Contents/Resources: ad hoc ("-") unless
# OPTRR_CODESIGN_IDENTITY names a Developer ID certificate. Notarisation (needed for Gatekeeper to open a
# downloaded app without a right-click > Open) is a separate step with the developer's Apple account:
#   xcrun notarytool submit packaging/dist/OptRR-VERSION.dmg --keychain-profile PROFILE --wait
#   xcrun stapler staple packaging/dist/OptRR-VERSION.dmg
set -euo pipefail
VERSION=${1:?usage: make_dmg.sh VERSION}
HERE=$(cd "$(dirname "$0")" && pwd)
DIST=$HERE/../dist
APP=$DIST/OptRR.app
DMG=$DIST/OptRR-$VERSION.dmg
[ -d "$APP" ] || { echo "no $APP: run packaging/build.py on macOS first" >&2; exit 1; }

IDENTITY=${OPTRR_CODESIGN_IDENTITY:--}
if [ "$IDENTITY" = "-" ]; then
    codesign --force --deep --sign - "$APP"
else
    codesign --force --deep --options runtime --timestamp --sign "$IDENTITY" "$APP"
fi
codesign --verify --deep --strict "$APP"

STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
cp -R "$APP" "$STAGE/"
ln -s /Applications "$STAGE/Applications"
cp "$APP/Contents/Resources/LICENSE" "$APP/Contents/Resources/THIRD_PARTY_LICENSES" "$STAGE/"
cat > "$STAGE/README.txt" <<TEXT
OptRR $VERSION

Drag OptRR into Applications (or into the Applications folder of your home folder, which needs no
administrator rights). The command-line program is inside the app:
  /Applications/OptRR.app/Contents/MacOS/optrr --help
To type just "optrr": ln -s /Applications/OptRR.app/Contents/MacOS/optrr ~/bin/optrr (with ~/bin on PATH).
TEXT
rm -f "$DMG"
hdiutil create -volname "OptRR $VERSION" -srcfolder "$STAGE" -ov -format UDZO "$DMG"
echo "wrote $DMG"
