"""Ask an X11 window to close the way a window manager's close button does: a
`WM_PROTOCOLS` client message carrying `WM_DELETE_WINDOW` (ICCCM §4.2.8), sent with libX11
through ctypes (the tests' X server runs no window manager, and this machine's xdotool
`windowclose` destroys the window instead)."""

from __future__ import annotations

import ctypes
import ctypes.util

CLIENT_MESSAGE = 33
NO_EVENT_MASK = 0


class _ClientMessage(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("serial", ctypes.c_ulong),
        ("send_event", ctypes.c_int),
        ("display", ctypes.c_void_p),
        ("window", ctypes.c_ulong),
        ("message_type", ctypes.c_ulong),
        ("format", ctypes.c_int),
        ("data", ctypes.c_long * 5),
    ]


class _Event(ctypes.Union):
    _fields_ = [("xclient", _ClientMessage), ("pad", ctypes.c_long * 24)]


def available() -> bool:
    return ctypes.util.find_library("X11") is not None


def send_wm_delete(display: str, window: int) -> None:
    """Send WM_DELETE_WINDOW to `window` on `display` (":N")."""
    name = ctypes.util.find_library("X11")
    if name is None:
        raise OSError("libX11 is not installed")
    x11 = ctypes.CDLL(name)
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x11.XInternAtom.restype = ctypes.c_ulong
    x11.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    x11.XSendEvent.argtypes = [
        ctypes.c_void_p,
        ctypes.c_ulong,
        ctypes.c_int,
        ctypes.c_long,
        ctypes.POINTER(_Event),
    ]
    x11.XFlush.argtypes = [ctypes.c_void_p]
    x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    connection = x11.XOpenDisplay(display.encode())
    if not connection:
        raise OSError(f"cannot open X display {display}")
    try:
        event = _Event()
        message = event.xclient
        message.type = CLIENT_MESSAGE
        message.send_event = 1
        message.display = connection
        message.window = window
        message.message_type = x11.XInternAtom(connection, b"WM_PROTOCOLS", 0)
        message.format = 32
        message.data[0] = x11.XInternAtom(connection, b"WM_DELETE_WINDOW", 0)
        message.data[1] = 0  # CurrentTime
        if not x11.XSendEvent(connection, window, 0, NO_EVENT_MASK, ctypes.byref(event)):
            raise OSError("XSendEvent failed")
        x11.XFlush(connection)
    finally:
        x11.XCloseDisplay(connection)
