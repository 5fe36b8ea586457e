"""The documents the benchmarks write and encode, shared so that rows compare like with like.

Two 2 KB shapes: :data:`LONG_STRING` is one long string and a few small
values (cheap for any encoder: the string is escaped in one C call), and
:func:`value_rich` is what agents mostly write, an intent-like document of
129 short values in nested objects and arrays (every value costs the encoder
a visit).
"""

from __future__ import annotations

from typing import Any

__all__ = ["LONG_STRING", "count_values", "value_rich"]

LONG_STRING: dict[str, Any] = {"text": "x" * 1800, "tags": ["a", "b", "c"], "n": 42}


def value_rich() -> dict[str, Any]:
    """An intent-like document: about 2 KB of canonical JSON holding 129 values."""
    requirements = [
        {
            "id": f"R{i}",
            "text": f"Sign-in step {i} works",
            "acceptance": f"test_login_{i} passes",
            "parent_id": "R0" if i else None,
            "done": i % 3 == 0,
            "evidence": [{"id": f"evidence:unit-{i}", "revision": i + 1}],
        }
        for i in range(10)
    ]
    return {
        "version": 1,
        "brief": "Let users sign in with a passkey and recover access by e-mail",
        "user_reference": "issue 42",
        "requirements": requirements,
        "boundaries": ["src/auth/", "tests/auth/"],
        "non_goals": ["SMS codes"],
        "labels": ["auth", "ui", "security", "p1", "web", "mobile"],
        "checks": {"unit": True, "lint": True, "types": False, "e2e": None},
        "owner": {"name": "Zoë", "team": "identity", "since": 2024, "role": "lead",
                  "active": True, "level": 3},
    }


def count_values(value: Any) -> int:
    """The number of JSON values in ``value``, containers included."""
    if isinstance(value, dict):
        return 1 + sum(count_values(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return 1 + sum(count_values(v) for v in value)
    return 1
