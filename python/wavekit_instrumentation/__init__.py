"""Run-time control of `wavekit run` from Python: switch instrumentation on and off, and choose
which dispatches of the GPU kernels run instrumented, while the program runs. A change takes
effect at the next dispatch; a kernel already running finishes as it started.

The functions talk to the preload shim that `wavekit run` puts into the process (through
ctypes: the shim's symbols are in the process's global scope). Without wavekit they do
nothing and `available()` is False, so the calls can stay in the program.

    import wavekit_instrumentation as wi

    wi.select("kernel=^solve every=10")     # the syntax of `wavekit run --select`
    with wi.disabled():
        warm_up()                           # runs the original kernels
    with wi.selected("first=1"):
        step()                              # its first dispatch instrumented
"""

import contextlib
import ctypes

_lib = ctypes.CDLL(None)
try:
    _set_enabled = _lib.wavekit_instrumentation_set_enabled
    _enabled = _lib.wavekit_instrumentation_enabled
    _select = _lib.wavekit_instrumentation_select
    _error = _lib.wavekit_instrumentation_error
    _set_enabled.argtypes, _set_enabled.restype = [ctypes.c_int], ctypes.c_int
    _enabled.argtypes, _enabled.restype = [], ctypes.c_int
    _select.argtypes, _select.restype = [ctypes.c_char_p], ctypes.c_int
    _error.argtypes, _error.restype = [], ctypes.c_char_p
except AttributeError:
    _lib = None


def available():
    """True when this process runs under `wavekit run`."""
    return _lib is not None


def enabled():
    """Whether instrumentation is on (False without wavekit)."""
    return _lib is not None and bool(_enabled())


def enable():
    """Switches instrumentation on; returns whether it was on."""
    return _lib is not None and bool(_set_enabled(1))


def disable():
    """Switches instrumentation off (every dispatch runs the original); returns whether it
    was on."""
    return _lib is not None and bool(_set_enabled(0))


def select(selection):
    """Installs a selection (`wavekit run --select` syntax; "all" for every dispatch). Raises
    ValueError naming the malformed clause, in which case the selection in force stays."""
    if _lib is None:
        return
    if _select(str(selection).encode()) != 0:
        raise ValueError(_error().decode())


@contextlib.contextmanager
def disabled():
    """Instrumentation off inside the block, as it was afterwards."""
    was_on = disable()
    try:
        yield
    finally:
        if was_on:
            enable()


@contextlib.contextmanager
def selected(selection, afterwards="all"):
    """`selection` inside the block, `afterwards` after it (the shim keeps no history to
    restore)."""
    select(selection)
    try:
        yield
    finally:
        select(afterwards)
