"""Compares the attribution of two hatchet profiles of the same workloads (ours and Proton's):
for every calling-context path, the number of kernels attributed to it, and whether the
<captured_at> paths of CUDA-graph kernels agree. Also checks ours against the CUPTI floor's
kernel count. usage: compare.py OURS.hatchet PROTON.hatchet [FLOOR.json]"""

import json
import sys


def context_counts(path):
    tree = json.load(open(path))[0]
    counts = {}

    def walk(node, prefix):
        children = node.get("children", [])
        if not children:
            counts[prefix] = counts.get(prefix, 0) + int(node.get("metrics", {}).get("count", 0))
            return
        for c in children:
            name = c["frame"]["name"]
            walk(c, prefix if not c.get("children") else (prefix + (name,)))

    walk(tree, ())
    return counts


def main():
    ours, proton = context_counts(sys.argv[1]), context_counts(sys.argv[2])
    keys = sorted(set(ours) | set(proton), key=lambda k: (-max(ours.get(k, 0), proton.get(k, 0)), k))
    same = sum(1 for k in keys if ours.get(k, 0) == proton.get(k, 0))
    print(f"contexts: {len(keys)}, identical kernel counts in {same}")
    print(f"{'ours':>10} {'proton':>10}  context")
    for k in keys[:40]:
        mark = "" if ours.get(k, 0) == proton.get(k, 0) else "  <-- differs"
        print(f"{ours.get(k, 0):10d} {proton.get(k, 0):10d}  {' / '.join(k) or '(root)'}{mark}")
    total_ours, total_proton = sum(ours.values()), sum(proton.values())
    print(f"total kernels: ours {total_ours}, proton {total_proton}")
    if len(sys.argv) > 3:
        floor = json.load(open(sys.argv[3]))
        print(f"CUPTI floor consumer: {floor['kernels']} kernels, {floor['dropped']} dropped; "
              f"ours {'==' if floor['kernels'] == total_ours else '!='} floor")


if __name__ == "__main__":
    main()
