"""wavekit_profile with no profiler attached: everything is a harmless no-op, and a bad
precision is a clear error."""
import wavekit_profile as wp

assert wp.backend == "none", wp.backend
assert not wp.active()


@wp.scope("decorated")
def add(a, b):
    return a + b


assert add(2, 3) == 5 and add.__name__ == "add"
with wp.scope("block") as s:
    assert s.name == "block"
wp.advance_phase()
wp.enable()
wp.disable()
wp.set_next_launch_work({"flops16": 1e9, "fp8": 2e9}, bytes=10)
try:
    wp.set_next_launch_work({"fp4": 1})
except ValueError as e:
    assert "fp4" in str(e), e
else:
    raise AssertionError("an unknown precision must be rejected")
print("ok")

# The Triton hook, against a stand-in for triton.knobs: it must pass launch_metadata's FLOPs
# (Proton's names mapped to ours) and bytes to the next launch.
import sys
import types

runtime = types.SimpleNamespace(launch_enter_hook=None)
sys.modules["triton"] = types.SimpleNamespace(knobs=types.SimpleNamespace(runtime=runtime))
seen = []
wp._set_work = lambda flops, nbytes: seen.append((list(flops), nbytes))
wp.install_triton_hook()
assert runtime.launch_enter_hook is not None


class Lazy:
    def get(self):
        return {"name": "matmul", "flops16": 2.0e9, "bytes": 4096}


runtime.launch_enter_hook(Lazy())
assert seen == [([0.0, 2.0e9, 0.0, 0.0, 0.0, 0.0, 0.0], 4096.0)], seen
runtime.launch_enter_hook = lambda m: None
try:
    wp.install_triton_hook()
except RuntimeError as e:
    assert "another Triton launch hook" in str(e)
else:
    raise AssertionError("a foreign hook must not be replaced silently")


# Triton 3.5 and later keep a chain of launch hooks: ours joins it, once, beside others.
class HookChain:
    def __init__(self):
        self.calls = []

    def add(self, func):
        if func not in self.calls:
            self.calls.append(func)

    def __call__(self, *args):
        for call in self.calls:
            call(*args)


other = []
runtime.launch_enter_hook = HookChain()
runtime.launch_enter_hook.add(lambda m: other.append(m))
seen.clear()
wp.install_triton_hook()
wp.install_triton_hook()
runtime.launch_enter_hook(Lazy())
assert seen == [([0.0, 2.0e9, 0.0, 0.0, 0.0, 0.0, 0.0], 4096.0)], seen
assert len(other) == 1, "the other hook in the chain was not kept"
print("triton hook ok")
