#!/usr/bin/env python3
"""Validates stats.json files against docs/stats.schema.json (python3-jsonschema, Debian).

   validate_stats.py SCHEMA STATS.json...

Also checks what a schema cannot say: a run marked incomplete says why, and the run totals add
up the launches."""
import json
import sys

import jsonschema


def main():
    schema = json.load(open(sys.argv[1]))
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    bad = 0
    for path in sys.argv[2:]:
        stats = json.load(open(path))
        errors = sorted(validator.iter_errors(stats), key=lambda e: list(e.path))
        for e in errors:
            print(f"{path}: {'/'.join(map(str, e.path)) or '(top)'}: {e.message[:300]}")
        bad += len(errors)
        if stats["complete"] != ("stopped_by" not in stats):
            print(f"{path}: complete is {stats['complete']} but stopped_by is "
                  f"{stats.get('stopped_by')}")
            bad += 1
        run = stats["run"]
        launches = stats["launches"]
        if run["launches"] != len(launches) or run["warp_instructions"] != sum(
                l["stats"]["warp_instructions"] for l in launches):
            print(f"{path}: run totals do not add up the launches")
            bad += 1
        # A launch that faulted has no timing (the cycle-level model stopped mid-launch).
        if "cycles" in run and run["cycles"] != sum(
                l["timing"]["cycles"] for l in launches if "timing" in l):
            print(f"{path}: run cycles do not add up the launches")
            bad += 1
    print(f"{len(sys.argv) - 2} stats.json files checked, {bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
