"""schemathesis hooks of ops/fuzz: besides the strings the schema allows, each request body or query
may carry, in one of its text fields, a text that breaks text algorithms (deep nesting, brackets,
emphasis runs, wide tables, long lines, 100,000 lines): the texts that crashed or stalled the first
Markdown renderer and those that make others quadratic. The service must answer each within its
checks (no server error, a documented status), as with any other input."""
import schemathesis
from hypothesis import strategies as st

PATHOLOGICAL = [
    "[" * 99000,
    "[" * 60,
    "![[]()" * 16000,
    "*a **a " * 7000 + "b" + " a** a*" * 7000,
    "> " * 49000 + "a",
    "- " * 49000 + "a",
    "|a" * 10000 + "\n" + "|-" * 10000 + "\n" + "a\n" * 29000,
    "a\n" * 49000,
    "\n" * 99000,
    "x" * 99000,
    "`" * 5000,
    "<a " * 30000,
    "&#" * 40000,
    "<em>" * 12000 + "</p>" * 12000,
    "[x](" * 20000,
    "\u202e\ufeff\u0000" * 100,
    "\U0001d4b3\u0301" * 5000,
]


def _one_field(value, text_fields):
    if not text_fields:
        return st.just(value)
    replaced = st.tuples(st.sampled_from(text_fields), st.sampled_from(PATHOLOGICAL)).map(
        lambda pair: {**value, pair[0]: pair[1]})
    return st.one_of(st.just(value), replaced)


@schemathesis.hook
def flatmap_body(ctx, body):
    if not isinstance(body, dict):
        return st.just(body)
    return _one_field(body, sorted(key for key, item in body.items() if isinstance(item, str)))


@schemathesis.hook
def flatmap_query(ctx, query):
    if not isinstance(query, dict):
        return st.just(query)
    # a query string carries at most a few kilobytes through proxies: the short texts only
    return _one_field(query, sorted(key for key, item in query.items() if isinstance(item, str))).map(
        lambda q: {k: (v[:4000] if isinstance(v, str) else v) for k, v in q.items()})
