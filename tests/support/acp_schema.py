"""The official ACP v1 JSON schema (``tests/support/schema``) and one way to check a message against it."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # no types-jsonschema in the dev extras

SCHEMA: dict[str, Any] = json.loads((Path(__file__).parent / "schema" / "acp-v1.schema.json").read_text())


@functools.cache
def _validator(definition: str) -> Any:
    schema = {"$defs": SCHEMA["$defs"], "$ref": f"#/$defs/{definition}"}
    cls = jsonschema.validators.validator_for(SCHEMA)
    cls.check_schema(schema)  # once per definition: checking the 250 KB schema on every call is slow
    return cls(schema)


def validate(instance: Any, definition: str) -> None:
    """Check ``instance`` against ``definition`` of the official ACP v1 schema; raises `jsonschema.ValidationError`."""
    _validator(definition).validate(instance)
