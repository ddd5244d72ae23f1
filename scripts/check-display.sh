#!/bin/sh
# Qt's xcb platform plugin aborts with an unhelpful message when a few X11 libraries are
# missing (../shared/PITFALLS.md §9). Say what to install instead.
[ "$(uname -s)" = "Linux" ] || exit 0
[ -n "${QT_QPA_PLATFORM:-}" ] && exit 0
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "No display found (DISPLAY and WAYLAND_DISPLAY are unset): the window cannot open." >&2
  echo "Run it from a desktop session, or try: QT_QPA_PLATFORM=offscreen make run" >&2
  exit 1
fi
command -v ldconfig >/dev/null 2>&1 || exit 0
missing=""
for lib in libxcb-cursor.so.0 libxcb-icccm.so.4 libxcb-keysyms.so.1 libxcb-xinerama.so.0; do
  ldconfig -p 2>/dev/null | grep -q "$lib" || missing="$missing $lib"
done
if [ -n "$missing" ]; then
  echo "Qt needs X11 libraries that are missing:$missing" >&2
  echo "On Debian/Ubuntu: sudo apt-get install libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-xinerama0" >&2
  exit 1
fi
