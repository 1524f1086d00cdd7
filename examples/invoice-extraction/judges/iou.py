#!/usr/bin/env python3
"""Bounding-box IoU judge for proposal-eval's `[[code_judge]]` (Python 3, standard library only).

Reads one JSON object on stdin: {input, candidate_answer, reference_answer, config, case}.
Prints {score, hits, misses, reasoning} on stdout.

The boxes are read from both answers at `config.boxes_path` (a dot path, default "boxes"; an
answer that is itself a list is taken as the boxes). A box is [x1, y1, x2, y2], or an object
with x1/y1/x2/y2, or with x/y/width/height. The boxes are either

- a list: each reference box is paired one-to-one with the candidate box it overlaps most
  (greedy by IoU, highest first); or
- an object of named boxes (`{"total_amount": [x1, y1, x2, y2], ...}`): each reference box is
  paired with the candidate box of the same name.

A pair with IoU >= `iou_min` (default 0.5) is a hit. The score is the mean IoU over all boxes
(max(#reference, #candidate) for lists, the union of names for named boxes), so missing and
extra boxes both pull it down. Malformed input exits 2 with the reason on stderr.
"""

import json
import sys


def fail(message):
    print(f"iou.py: {message}", file=sys.stderr)
    sys.exit(2)


def at_path(value, path):
    if isinstance(value, list) or not path:
        return value
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def to_box(raw, where):
    if isinstance(raw, list) and len(raw) == 4:
        x1, y1, x2, y2 = raw
    elif isinstance(raw, dict) and all(k in raw for k in ("x1", "y1", "x2", "y2")):
        x1, y1, x2, y2 = raw["x1"], raw["y1"], raw["x2"], raw["y2"]
    elif isinstance(raw, dict) and all(k in raw for k in ("x", "y", "width", "height")):
        x1, y1 = raw["x"], raw["y"]
        x2, y2 = x1 + raw["width"], y1 + raw["height"]
    else:
        fail(f"{where}: a box is [x1, y1, x2, y2] or an object with x1/y1/x2/y2 or x/y/width/height, got {json.dumps(raw)}")
    try:
        x1, y1, x2, y2 = (float(v) for v in (x1, y1, x2, y2))
    except (TypeError, ValueError):
        fail(f"{where}: box coordinates must be numbers, got {json.dumps(raw)}")
    return (min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2))


def iou(a, b):
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    if union <= 0.0:
        return 1.0 if a == b else 0.0
    return inter / union


def is_box_object(raw):
    return isinstance(raw, dict) and (
        all(k in raw for k in ("x1", "y1", "x2", "y2"))
        or all(k in raw for k in ("x", "y", "width", "height"))
    )


def boxes(answer, path, side):
    raw = at_path(answer, path)
    if raw is None:
        return None
    if isinstance(raw, dict) and not is_box_object(raw):
        return {str(name): to_box(b, f"{side} box `{name}`") for name, b in raw.items()}
    if not isinstance(raw, list):
        fail(f"{side} `{path}` is not a list of boxes")
    return [to_box(b, f"{side} box {i}") for i, b in enumerate(raw)]


def main():
    try:
        request = json.load(sys.stdin)
    except json.JSONDecodeError as e:
        fail(f"stdin is not JSON: {e}")
    config = request.get("config") or {}
    path = config.get("boxes_path", "boxes")
    iou_min = float(config.get("iou_min", 0.5))

    reference = boxes(request.get("reference_answer"), path, "reference")
    candidate = boxes(request.get("candidate_answer"), path, "candidate")
    if reference is None:
        fail(f"the reference answer has no `{path}`")
    if isinstance(reference, dict):
        if not candidate:
            candidate = {}
        if not isinstance(candidate, dict):
            fail(f"the reference `{path}` holds named boxes but the candidate's is a list")
        named(reference, candidate, iou_min)
        return
    if not candidate:
        candidate = []
    if isinstance(candidate, dict):
        fail(f"the reference `{path}` is a list of boxes but the candidate's holds named boxes")

    pairs = sorted(
        ((iou(r, c), i, j) for i, r in enumerate(reference) for j, c in enumerate(candidate)),
        reverse=True,
    )
    used_ref, used_cand, matched = set(), set(), []
    for value, i, j in pairs:
        if value > 0.0 and i not in used_ref and j not in used_cand:
            used_ref.add(i)
            used_cand.add(j)
            matched.append((i, j, value))

    hits, misses = [], []
    for i, j, value in sorted(matched):
        line = f"reference box {i} ~ candidate box {j}: IoU {value:.2f}"
        if value >= iou_min:
            hits.append(f"{line} >= {iou_min}")
        else:
            misses.append(f"{line} < {iou_min}")
    for i in range(len(reference)):
        if i not in used_ref:
            misses.append(f"reference box {i}: no overlapping candidate box")
    for j in range(len(candidate)):
        if j not in used_cand:
            misses.append(f"candidate box {j}: extra, overlaps no reference box")

    slots = max(len(reference), len(candidate))
    score = 1.0 if slots == 0 else sum(v for _, _, v in matched) / slots
    reasoning = (
        f"{len(hits)}/{len(reference)} reference boxes matched at IoU >= {iou_min}; "
        f"mean IoU {score:.2f} over {slots} boxes"
    )
    json.dump({"score": score, "hits": hits, "misses": misses, "reasoning": reasoning}, sys.stdout)
    sys.stdout.write("\n")


def named(reference, candidate, iou_min):
    hits, misses, total = [], [], 0.0
    for name, ref in reference.items():
        if name not in candidate:
            misses.append(f"box `{name}`: missing from the candidate")
            continue
        value = iou(ref, candidate[name])
        total += value
        line = f"box `{name}`: IoU {value:.2f}"
        if value >= iou_min:
            hits.append(f"{line} >= {iou_min}")
        else:
            misses.append(f"{line} < {iou_min}")
    for name in candidate:
        if name not in reference:
            misses.append(f"box `{name}`: extra, not in the reference")
    slots = len(set(reference) | set(candidate))
    score = 1.0 if slots == 0 else total / slots
    reasoning = (
        f"{len(hits)}/{len(reference)} named boxes matched at IoU >= {iou_min}; "
        f"mean IoU {score:.2f} over {slots} boxes"
    )
    json.dump({"score": score, "hits": hits, "misses": misses, "reasoning": reasoning}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
