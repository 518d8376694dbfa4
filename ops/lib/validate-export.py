#!/usr/bin/env python3
"""Validates an export against the schema the contract names for it, with jsonschema (JSON Schema
2020-12, the dialect of OpenAPI 3.1; formats such as uuid and date-time checked).

usage: ops/lib/validate-export.py SCHEMA FILE [--lines]
  SCHEMA   a schema of the contract's components (Sources/BackofficeAPI/openapi.yaml), e.g. AuditExportLine
  FILE     the export: one JSON document, or with --lines JSON Lines (each non-empty line on its own)

Needs a Python with jsonschema, rfc3339-validator and PyYAML (the tests make one: `.build/test-venv/bin/python`).
Prints each error as `line N: path: message` (line 1 for a document) and how many lines were read.
Exit 0 when every line is valid, 1 when one is not, 64 on usage.
"""
import json
import pathlib
import sys

CONTRACT = pathlib.Path(__file__).resolve().parents[2] / "Sources/BackofficeAPI/openapi.yaml"


def validator(name):
    import jsonschema  # noqa: E402 (imported here so that --help needs neither)
    import yaml

    document = yaml.safe_load(CONTRACT.read_text(encoding="utf-8"))
    schemas = document.get("components", {}).get("schemas", {})
    if name not in schemas:
        sys.exit(f"validate-export: the contract has no schema {name}")
    # The components ride along so that every `#/components/schemas/…` reference resolves.
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": f"#/components/schemas/{name}",
        "components": document["components"],
    }
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    return jsonschema.Draft202012Validator(schema, format_checker=checker)


def main(argv):
    if len(argv) == 2 and argv[1] in ("--help", "-h"):
        print(__doc__)
        return 0
    if len(argv) not in (3, 4) or (len(argv) == 4 and argv[3] != "--lines"):
        print(__doc__, file=sys.stderr)
        return 64
    check = validator(argv[1])
    text = pathlib.Path(argv[2]).read_text(encoding="utf-8")
    units = enumerate(text.split("\n"), start=1) if len(argv) == 4 else [(1, text)]
    (read, bad) = (0, 0)
    for number, unit in units:
        if not unit.strip():
            continue
        read += 1
        try:
            value = json.loads(unit)
        except json.JSONDecodeError as error:
            print(f"line {number}: not JSON: {error}")
            bad += 1
            continue
        for error in check.iter_errors(value):
            print(f"line {number}: {error.json_path}: {error.message[:300]}")
            bad += 1
    print(f"{read} read, {bad} error(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
