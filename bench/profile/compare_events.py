"""Compares the CUPTI-free backend's profile with the CUPTI backend's, of the same workloads run
in two processes: for every (context, kernel) outside CUDA graphs, the launch count and the mean
time. The events backend names kernels through the driver (cuFuncGetName / cuKernelGetName) and
times them with event pairs, CUPTI from its activity records, so equal names and counts check
the hooks, and the time ratio shows what event timing adds (launch latency on a starved GPU).
usage: compare_events.py EVENTS.hatchet CUPTI.hatchet"""

import json
import sys


def leaves(path):
    tree = json.load(open(path))[0]
    found = {}

    def walk(node, prefix):
        for child in node.get("children", []):
            name = child["frame"]["name"]
            if name.startswith("<captured_at>") or name.startswith("<cuda graph"):
                continue  # graphs: per node with CUPTI, per launch with events
            if child.get("children"):
                walk(child, prefix + (name,))
            else:
                m = child.get("metrics", {})
                count = int(m.get("count", 0))
                found[(prefix, name)] = (count, float(m.get("time (ns)", 0)) / max(count, 1))

    walk(tree, ())
    return found


def main():
    events, cupti = leaves(sys.argv[1]), leaves(sys.argv[2])
    keys = sorted(set(events) | set(cupti), key=lambda k: -max(events.get(k, (0, 0))[0],
                                                                cupti.get(k, (0, 0))[0]))
    same = sum(1 for k in keys if events.get(k, (0,))[0] == cupti.get(k, (0,))[0])
    print(f"(context, kernel) pairs outside graphs: {len(keys)}; equal counts in {same}")
    print(f"{'events':>8} {'cupti':>8} {'events us':>10} {'cupti us':>9} {'ratio':>6}  context / kernel")
    for k in keys[:40]:
        (ec, et), (cc, ct) = events.get(k, (0, 0.0)), cupti.get(k, (0, 0.0))
        ratio = et / ct if ct else float("nan")
        mark = "" if ec == cc else "  <-- count differs"
        print(f"{ec:8d} {cc:8d} {et / 1e3:10.2f} {ct / 1e3:9.2f} {ratio:6.2f}  "
              f"{' / '.join(k[0] + (k[1][:70],))}{mark}")


if __name__ == "__main__":
    main()
