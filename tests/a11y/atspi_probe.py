"""Read one application's AT-SPI tree as a screen reader does, and print it as JSON.

Run by Debian's /usr/bin/python3 (pyatspi is packaged for it, not for the venv) on the
application's D-Bus session bus (`tests/a11y/test_screen_reader.py` starts both):

    atspi_probe.py --app Converge --ready Conversations [--focus NAME --wait-under NAME]

It polls the accessibility registry, with a deadline, until the application is listed and
a showing object named `--ready` has children (the sidebar's rows have arrived). With
`--focus`, it then moves the keyboard focus to the first showing object of that name
(`Component.grabFocus`, as a screen reader's "focus this" does; `--activate` first clicks
an object, so that the window has the input focus) and polls until a showing
object named `--wait-under` has a descendant with a name or text (the transcript filled).
Then it prints the tree: name, role, description, states, text, children. Exit status 0,
or 2 when the deadline passed (the last tree seen is printed all the same).
"""

import argparse
import json
import sys
import time

import pyatspi

MAX_DEPTH = 40
MAX_CHILDREN = 200
TEXT_LIMIT = 2000
POLL = 0.1


def node(acc, depth=0):
    """One accessible object and its children, as plain data."""
    try:
        states = acc.getState()
        out = {
            "name": acc.name or "",
            "role": acc.getRoleName(),
            "description": acc.description or "",
            "showing": states.contains(pyatspi.STATE_SHOWING),
            "focusable": states.contains(pyatspi.STATE_FOCUSABLE),
            "focused": states.contains(pyatspi.STATE_FOCUSED),
            "active": states.contains(pyatspi.STATE_ACTIVE),
        }
    except Exception as exc:  # gone meanwhile
        return {"name": "", "role": "gone", "error": repr(exc), "children": []}
    try:
        text = acc.queryText()
        out["text"] = text.getText(0, min(text.characterCount, TEXT_LIMIT))
    except Exception:  # no Text interface
        pass
    children = []
    if depth < MAX_DEPTH:
        for i in range(min(acc.childCount, MAX_CHILDREN)):
            child = acc.getChildAtIndex(i)
            if child is not None:
                children.append(node(child, depth + 1))
    out["children"] = children
    return out


def find(tree, name):
    """The first showing object named `name`, depth first."""
    if tree.get("name") == name and tree.get("showing"):
        return tree
    for child in tree.get("children", []):
        found = find(child, name)
        if found is not None:
            return found
    return None


def find_live(acc, name):
    """The live accessible object for `find`."""
    try:
        if acc.name == name and acc.getState().contains(pyatspi.STATE_SHOWING):
            return acc
        for i in range(min(acc.childCount, MAX_CHILDREN)):
            child = acc.getChildAtIndex(i)
            found = find_live(child, name) if child is not None else None
            if found is not None:
                return found
    except Exception:
        return None
    return None


def has_words(tree):
    for child in tree.get("children", []):
        if child.get("name") or child.get("text") or has_words(child):
            return True
    return False


def application(app_name):
    desktop = pyatspi.Registry.getDesktop(0)
    for i in range(desktop.childCount):
        app = desktop.getChildAtIndex(i)
        if app is not None and app.name == app_name:
            return app
    return None


def poll(app_name, ready, end):
    """(app, tree) once `ready(tree)` holds, or (None, last tree) after `end`."""
    tree = None
    while True:
        try:
            app = application(app_name)
            if app is not None:
                tree = node(app)
                if ready(tree):
                    return app, tree
        except Exception as exc:  # the registry or the application still starting
            tree = {"name": "", "role": "error", "error": repr(exc), "children": []}
        if time.monotonic() > end:
            return None, tree
        time.sleep(POLL)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--app", required=True)
    parser.add_argument("--ready", required=True)
    parser.add_argument("--activate", help="click the centre of the object of this name first")
    parser.add_argument("--focus")
    parser.add_argument("--wait-under")
    parser.add_argument("--deadline", type=float, default=60.0)
    args = parser.parse_args()
    end = time.monotonic() + args.deadline

    def listed(tree):
        found = find(tree, args.ready)
        return found is not None and bool(found["children"])

    app, tree = poll(args.app, listed, end)
    if app is not None and args.activate:
        # Under Xvfb no window manager gives the new window the input focus; a click does
        # (Qt activates a window clicked in), as the user's first click would.
        target = find_live(app, args.activate)
        if target is None:
            print(json.dumps(tree))
            return 3
        x, y, width, height = target.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
        pyatspi.Registry.generateMouseEvent(x + width // 2, y + height // 2, "b1c")

        def active(tree):
            frame = next((c for c in tree["children"] if c["role"] == "frame"), None)
            return frame is not None and frame.get("active", False)

        app, tree = poll(args.app, active, end)
    if app is not None and args.focus:
        target = find_live(app, args.focus)
        if target is None or not target.queryComponent().grabFocus():
            print(json.dumps(tree))
            return 3
        under = args.wait_under or args.ready

        def filled(tree):
            found = find(tree, under)
            return found is not None and has_words(found)

        app, tree = poll(args.app, filled, end)
    print(json.dumps(tree))
    return 0 if app is not None else 2


if __name__ == "__main__":
    sys.exit(main())
