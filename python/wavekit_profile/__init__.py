"""wavekit profile from Python.

Scopes (a context manager and decorator), phases, enable/disable and declared work for the
next kernel launch, talking to the profiler library that `wavekit profile` injects into this
process. Every call is a cheap no-op when no profiler is attached, so instrumented code can
stay instrumented. The fast path is the `wavekit_profile_native` extension (native.c, built by
bench/profile/build.sh where Python.h exists, into a directory on PYTHONPATH); without it the
same functions go through ctypes.

    import wavekit_profile as wp

    with wp.scope("decode"):
        model(x)

    @wp.scope("sampler")
    def sample(logits): ...

    wp.advance_phase()          # e.g. every 100 steps, from any thread
"""

import ctypes
import functools
import os

PRECISIONS = ("fp8", "fp16", "tf32", "fp32", "fp64", "fp64_tensor", "int8")


def _library_path():
    for variable in ("WAVEKIT_PROFILE_LIBRARY", "CUDA_INJECTION64_PATH"):
        path = os.environ.get(variable, "")
        if "wavekit_profile" in path:
            return path
    for path in os.environ.get("LD_PRELOAD", "").split(":"):
        if "wavekit_profile" in path:
            return path
    return None


_path = _library_path()
try:
    import wavekit_profile_native as _native  # type: ignore

    _native.load(_path or "")
    _enter, _exit = _native.enter, _native.exit
    _advance, _set_enabled, _active = _native.advance_phase, _native.set_enabled, _native.active
    _set_work = _native.set_next_launch_work
    backend = "native"
except ImportError:
    # dlopen of the path the driver already loaded returns that same library and its state.
    _lib = ctypes.CDLL(_path) if _path else None
    if _lib is not None:
        _lib.wavekit_profile_intern.argtypes = [ctypes.c_char_p]
        _lib.wavekit_profile_intern.restype = ctypes.c_uint32
        _lib.wavekit_profile_scope_enter_id.argtypes = [ctypes.c_uint32]
        _lib.wavekit_profile_set_next_launch_work.argtypes = [
            ctypes.POINTER(ctypes.c_double), ctypes.c_double]
        _lib.wavekit_profile_set_enabled.argtypes = [ctypes.c_int]
        _ids = {}

        def _enter(name):
            # Interned once per name, so entering takes no lock in the profiler.
            name_id = _ids.get(name)
            if name_id is None:
                if not _lib.wavekit_profile_active():
                    return  # the driver has not started the profiler yet
                name_id = _ids[name] = _lib.wavekit_profile_intern(name.encode())
            _lib.wavekit_profile_scope_enter_id(name_id)

        _exit = _lib.wavekit_profile_scope_exit
        _advance = _lib.wavekit_profile_advance_phase

        def _set_enabled(on):
            _lib.wavekit_profile_set_enabled(1 if on else 0)

        def _active():
            return bool(_lib.wavekit_profile_active())

        def _set_work(flops, nbytes):
            array = (ctypes.c_double * len(PRECISIONS))(*flops)
            _lib.wavekit_profile_set_next_launch_work(array, float(nbytes))
    else:
        def _enter(name):
            pass

        def _exit():
            pass

        def _advance():
            pass

        def _set_enabled(on):
            pass

        def _active():
            return False

        def _set_work(flops, nbytes):
            pass
    backend = "ctypes" if _lib is not None else "none"


class scope:
    """A calling-context scope: `with scope("name"):` or `@scope("name")`."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = str(name)

    def __enter__(self):
        _enter(self.name)
        return self

    def __exit__(self, *exc):
        _exit()
        return False

    def __call__(self, function):
        name = self.name

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            _enter(name)
            try:
                return function(*args, **kwargs)
            finally:
                _exit()

        return wrapper


def advance_phase():
    """Ends the current phase; it is exported once its kernels have arrived."""
    _advance()


def enable():
    _set_enabled(True)


def disable():
    _set_enabled(False)


def active():
    """True when a profiler session is running in this process."""
    return _active()


def set_next_launch_work(flops=None, bytes=0.0):
    """Declares the work of this thread's next kernel launch: `flops` maps a precision
    (one of PRECISIONS, or Proton's flops8/16/32/64) to a count."""
    aliases = {"flops8": "fp8", "flops16": "fp16", "flops32": "fp32", "flops64": "fp64",
               "bf16": "fp16"}
    values = [0.0] * len(PRECISIONS)
    for key, value in (flops or {}).items():
        key = aliases.get(key, key)
        if key not in PRECISIONS:
            raise ValueError(f"unknown precision {key!r}; expected one of {PRECISIONS}")
        values[PRECISIONS.index(key)] += float(value)
    _set_work(values, float(bytes))


_TRITON_FLOPS = {"flops8": "fp8", "flops16": "fp16", "flops32": "fp32", "flops64": "fp64"}


def _triton_launch_enter(lazy_metadata):
    # Triton calls this just before the launch, on the launching thread, so the declared work
    # attaches to exactly that kernel. `get()` runs the kernel's launch_metadata function.
    metadata = lazy_metadata.get()
    flops = {_TRITON_FLOPS[k]: metadata[k] for k in _TRITON_FLOPS if k in metadata}
    nbytes = metadata.get("bytes", 0)
    if flops or nbytes:
        set_next_launch_work(flops, nbytes)


def install_triton_hook():
    """Takes FLOPs and bytes from Triton kernels' `launch_metadata` (Proton's convention:
    flops8/16/32/64, bytes; flops32 counts as CUDA-core fp32). Costs a Python call per Triton
    launch, so install it only when utilisation is wanted."""
    from triton import knobs

    current = knobs.runtime.launch_enter_hook
    if hasattr(current, "add"):
        # Triton 3.5 and later: a chain of hooks, which other tools may share.
        current.add(_triton_launch_enter)
        return
    if current is not None and current is not _triton_launch_enter:
        raise RuntimeError("another Triton launch hook is installed (Proton's?); "
                           "only one profiler can own it")
    knobs.runtime.launch_enter_hook = _triton_launch_enter
