#!/usr/bin/env python3
"""Fuzzy supplier-name judge for proposal-eval's `[[code_judge]]` (Python 3, standard library only).

Reads one JSON object on stdin: {input, candidate_answer, reference_answer, config, case}.
Prints {score, hits, misses, reasoning} on stdout.

The supplier name is read from both answers at `config.path` (a dot path, default
"invoice.supplier_name"). Both names are normalized the way OCR'd invoices need: case folded,
accents kept, punctuation dropped, whitespace collapsed, and legal-form suffixes (GmbH, Inc,
Ltd, LLC, ...; `config.suffixes` replaces the list) removed. The score is the normalized
Levenshtein similarity of the two normalized names (1 - distance / longer length). A name in
`config.aliases` (a map from alias to canonical name, compared after normalization) counts as
its canonical name. Malformed input exits 2 with the reason on stderr.
"""

import json
import re
import sys
import unicodedata

DEFAULT_SUFFIXES = [
    "gmbh", "mbh", "ag", "kg", "ug", "se", "inc", "incorporated", "ltd", "limited", "llc",
    "llp", "plc", "co", "corp", "corporation", "company", "sa", "sas", "sarl", "srl", "spa",
    "bv", "nv", "oy", "ab", "as", "aps", "pty", "kk",
]


def fail(message):
    print(f"supplier_name.py: {message}", file=sys.stderr)
    sys.exit(2)


def at_path(value, path):
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def normalize(name, suffixes):
    text = unicodedata.normalize("NFKC", name).casefold()
    text = re.sub(r"[^\w\s]", " ", text)
    words = text.split()
    while words and words[-1] in suffixes:
        words.pop()
    return " ".join(words)


def levenshtein(a, b):
    if len(a) < len(b):
        a, b = b, a
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        diagonal, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            diagonal, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, diagonal + (x != y))
    return row[len(b)]


def similarity(a, b):
    longest = max(len(a), len(b))
    return 1.0 if longest == 0 else 1.0 - levenshtein(a, b) / longest


def main():
    try:
        request = json.load(sys.stdin)
    except json.JSONDecodeError as e:
        fail(f"stdin is not JSON: {e}")
    config = request.get("config") or {}
    path = config.get("path", "invoice.supplier_name")
    suffixes = set(s.casefold() for s in config.get("suffixes", DEFAULT_SUFFIXES))
    aliases = {
        normalize(k, suffixes): normalize(v, suffixes)
        for k, v in (config.get("aliases") or {}).items()
    }

    reference = at_path(request.get("reference_answer"), path)
    candidate = at_path(request.get("candidate_answer"), path)
    if not isinstance(reference, str):
        fail(f"the reference answer has no string at `{path}`")
    if candidate is None:
        out = {"score": 0.0, "hits": [], "misses": [f"`{path}` is missing from the candidate"],
               "reasoning": f"no supplier name at `{path}`"}
        json.dump(out, sys.stdout)
        return
    if not isinstance(candidate, str):
        candidate = json.dumps(candidate)

    ref = normalize(reference, suffixes)
    cand = normalize(candidate, suffixes)
    ref, cand = aliases.get(ref, ref), aliases.get(cand, cand)
    score = similarity(ref, cand)
    line = f"{json.dumps(candidate)} vs {json.dumps(reference)}: normalized {json.dumps(cand)} vs {json.dumps(ref)}"
    hits, misses = [], []
    if score == 1.0:
        hits.append(f"{line}: same name")
    else:
        misses.append(f"{line}: similarity {score:.2f}")
    json.dump({"score": score, "hits": hits, "misses": misses,
               "reasoning": f"supplier name similarity {score:.2f} after normalization"}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
