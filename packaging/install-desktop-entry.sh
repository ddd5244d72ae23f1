#!/bin/sh
# Install Converge's desktop entry, icons and AppStream metadata for this user
# (~/.local/share, or $XDG_DATA_HOME), so it shows in the desktop's application menu.
#
#   packaging/install-desktop-entry.sh [COMMAND]
#
# COMMAND is what the entry runs: by default the `converge` beside this script when it is in
# the bundle (dist/converge/), else `converge` on PATH (a pipx install).
# Run it again after moving the bundle; `--uninstall` removes what it installed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
id=io.converge.Converge
data=${XDG_DATA_HOME:-$HOME/.local/share}
sizes="16 24 32 48 64 128 256 512"

if [ "${1:-}" = "--uninstall" ]; then
  rm -f "$data/applications/$id.desktop" "$data/metainfo/$id.metainfo.xml" \
    "$data/icons/hicolor/scalable/apps/$id.svg"
  for s in $sizes; do rm -f "$data/icons/hicolor/${s}x${s}/apps/$id.png"; done
  echo "removed Converge's desktop entry from $data"
  exit 0
fi

if [ -d "$here/_internal/app/icons" ]; then icons=$here/_internal/app/icons  # the bundle
else icons=$here/../app/icons; fi                                          # a checkout
if [ -n "${1:-}" ]; then command=$1
elif [ -x "$here/converge" ]; then command=$here/converge
else command=converge; fi
case $command in
  *[!A-Za-z0-9_./-]*) echo "the command's path must not contain spaces or quotes: $command" >&2; exit 1 ;;
esac

mkdir -p "$data/applications" "$data/metainfo" "$data/icons/hicolor/scalable/apps"
sed -e "s|^Exec=converge|Exec=$command|" -e "s|^TryExec=converge|TryExec=$command|" \
  "$here/converge.desktop" > "$data/applications/$id.desktop"
cp "$here/$id.metainfo.xml" "$data/metainfo/$id.metainfo.xml"
cp "$icons/$id.svg" "$data/icons/hicolor/scalable/apps/$id.svg"
for s in $sizes; do
  mkdir -p "$data/icons/hicolor/${s}x${s}/apps"
  cp "$icons/$id-$s.png" "$data/icons/hicolor/${s}x${s}/apps/$id.png"
done
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$data/applications" || true
command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t "$data/icons/hicolor" || true
echo "installed $data/applications/$id.desktop (runs $command)"
