"""Imported once by the fork server, so each worker process skips the heavy imports.

lancedb warns that forking after its import is experimental: the fork server only imports it
and never runs a query, so no runtime state is mid-operation when it forks (each child gets a
fresh runtime, which is the case lancedb's fork hook handles).
"""

import warnings

warnings.filterwarnings("ignore", message="lancedb fork support is experimental")

import lancedb  # noqa: E402,F401
import typer.testing  # noqa: E402,F401

import nxm.cli  # noqa: E402,F401
import nxm.embed  # noqa: E402,F401
import nxm.lifecycle  # noqa: E402,F401
import nxm.service  # noqa: E402,F401
import nxs.registry  # noqa: E402

nxs.registry.operations()  # imports every operation module
