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
