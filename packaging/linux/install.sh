#!/bin/sh
# Per-user installation of the OptRR Linux bundle: no root, nothing outside the user's home.
#   ./install.sh            install this folder for the current user
#   ./install.sh --remove   undo it
# The program stays in this folder (move the folder first if you want it elsewhere, then run this again).
# It adds: ~/.local/bin/optrr and ~/.local/bin/optrr-gui (symbolic links), a menu entry
# ~/.local/share/applications/optrr.desktop and the icon in ~/.local/share/icons/hicolor.
set -eu
APPDIR=$(cd "$(dirname "$0")" && pwd)
DATA=${XDG_DATA_HOME:-$HOME/.local/share}
BIN=$HOME/.local/bin
DESKTOP=$DATA/applications/optrr.desktop

refresh() {
    command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$DATA/applications" || true
    command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t "$DATA/icons/hicolor" || true
}

if [ "${1:-}" = "--remove" ]; then
    rm -f "$BIN/optrr" "$BIN/optrr-gui" "$DESKTOP" \
        "$DATA/icons/hicolor/256x256/apps/optrr.png" "$DATA/icons/hicolor/scalable/apps/optrr.svg"
    refresh
    echo "OptRR menu entry and commands removed (the folder $APPDIR itself was left in place)."
    exit 0
fi

mkdir -p "$BIN" "$DATA/applications" "$DATA/icons/hicolor/256x256/apps" "$DATA/icons/hicolor/scalable/apps"
ln -sf "$APPDIR/optrr" "$BIN/optrr"
ln -sf "$APPDIR/optrr-gui" "$BIN/optrr-gui"
cp "$APPDIR/share/icons/optrr.png" "$DATA/icons/hicolor/256x256/apps/optrr.png"
cp "$APPDIR/share/icons/optrr.svg" "$DATA/icons/hicolor/scalable/apps/optrr.svg"
sed "s|@APPDIR@|$APPDIR|g" "$APPDIR/share/optrr.desktop.in" > "$DESKTOP.tmp"
chmod 644 "$DESKTOP.tmp"
mv "$DESKTOP.tmp" "$DESKTOP"
refresh
echo "OptRR installed for $(id -un): menu entry 'OptRR', commands $BIN/optrr and $BIN/optrr-gui."
case ":$PATH:" in
    *":$BIN:"*) ;;
    *) echo "Note: $BIN is not on your PATH; add it, or start the programs from $APPDIR." ;;
esac
