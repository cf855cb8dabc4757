# Loaded by schemathesis (SCHEMATHESIS_HOOKS) in the suites' fuzzing runs.
#
# With `--workers 2` schemathesis generates cases in two threads, and Hypothesis describes each
# filter's lambda by parsing its source with ast.parse. CPython 3.11 keeps ast.parse's recursion
# depth in state shared by the threads (python/cpython#106905), so two parses at once can fail the
# whole run with "SystemError: AST constructor recursion depth mismatch": run 40 of the suite lost
# fair-share's fuzzing to it, the API untouched. One parse at a time; the rest stays parallel.
import ast
import threading

_parse = ast.parse
_one_at_a_time = threading.Lock()


def _parse_alone(*args, **kwargs):
    with _one_at_a_time:
        return _parse(*args, **kwargs)


ast.parse = _parse_alone
