"""Writes N fixtures (default 1,000) to generated/suite: 3 proposals of ~28 leaves each, the
proposals both in `input` and in `expected` (the no-model shape of bench/suite-scale)."""
import json, os, sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
out = "generated/suite"
os.makedirs(out, exist_ok=True)
for name in os.listdir(out):
    os.remove(os.path.join(out, name))
for i in range(n):
    proposals = [
        {
            "op": "raise_amount",
            "target": {"iban": f"DE{i:020d}", "name": f"Customer {i}", "country": "DE"},
            "amount": {"value": 100 + i + k, "currency": "EUR", "cents": (i * 7 + k) % 100},
            "dates": {"booked": "2026-01-15", "value": "2026-01-16", "due": "2026-02-01"},
            "flags": {"urgent": k == 0, "verified": True, "manual": False},
            "lines": [{"sku": f"SKU-{i}-{j}", "qty": j + 1, "price": 9.5 * (j + 1)} for j in range(3)],
            "note": f"proposal {k} of case {i}",
            "reference": f"REF-{i:06d}-{k}",
        }
        for k in range(3)
    ]
    fixture = {"description": f"case {i}", "input": {"proposals": proposals}, "expected": proposals}
    with open(os.path.join(out, f"case_{i:05d}.json"), "w") as f:
        json.dump(fixture, f, indent=2)
