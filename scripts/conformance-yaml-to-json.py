#!/usr/bin/env python3
"""Convert every ntc-templates expected parse kept in the conformance fixtures (`ntc_parsed.yml`) to
`ntc_parsed.json` beside it (the test runner reads JSON only; values are unchanged)."""
import json
import pathlib
import yaml

root = pathlib.Path(__file__).resolve().parent.parent / "drivers/tests/fixtures/conformance"
for y in sorted(root.rglob("ntc_parsed.yml")):
    data = yaml.safe_load(y.read_text())
    y.with_suffix(".json").write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(y.relative_to(root))
