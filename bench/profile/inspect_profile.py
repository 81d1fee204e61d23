"""Prints what a wavekit hatchet profile says about itself and its CUDA graphs: the profiler's
self-metrics, every leaf under a <captured_at> frame and every graph-level leaf ("<cuda graph
N>"; per-kernel leaves are named by their kernel) with its average time, the kernel count per top-level frame, and
how many kernels had a zero duration (a record whose timestamps CUPTI could not collect).
usage: inspect_profile.py PROFILE.hatchet"""

import json
import sys


def main():
    tree, _, extra = json.load(open(sys.argv[1]))
    print("self-metrics:", json.dumps(extra))
    top, zero = {}, 0

    def walk(node, path):
        nonlocal zero
        children = node.get("children", [])
        if not children:
            m = node.get("metrics", {})
            zero += int(m.get("time_log2_histogram", {}).get("0", 0))
            if path:
                top[path[0]] = top.get(path[0], 0) + int(m.get("count", 0))
            name = node["frame"]["name"]
            if "<captured_at>" in path or name.startswith("<cuda graph"):
                count = int(m.get("count", 0))
                avg_us = m.get("time (ns)", 0) / max(count, 1) / 1e3
                print(f"  {count:8d}  {avg_us:10.1f} us avg  {' / '.join(path + (name,))}")
            return
        for c in children:
            walk(c, path + ((c["frame"]["name"],) if c.get("children") else ()))

    print("leaves under <captured_at> and graph leaves (count, average time, path):")
    walk(tree, ())
    print("kernels per top-level frame:", json.dumps(top))
    print("zero-duration kernels:", zero)


if __name__ == "__main__":
    main()
