#!/usr/bin/env python3
"""Write `rdma-webhook policy schema` into the chart's values schema under `policy`.

    scripts/embed-policy-schema.py build/rdma-webhook

The chart's schema then refuses, at `helm install`, what the server would refuse at start;
tests/cli/test_policy_schema.py fails while the checked-in copy differs.
"""
import json
import pathlib
import subprocess
import sys

chart = pathlib.Path(__file__).resolve().parents[1] / "charts" / "rdma-webhook" / "values.schema.json"
binary = sys.argv[1] if len(sys.argv) > 1 else "build/rdma-webhook"
policy = json.loads(subprocess.run([binary, "policy", "schema"], check=True, capture_output=True,
                                   text=True).stdout)
policy.pop("$schema")  # meaningful only at a document's root
values = json.loads(chart.read_text())
values["properties"]["policy"] = policy
chart.write_text(json.dumps(values, indent=2) + "\n")
