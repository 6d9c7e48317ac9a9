"""`python -m nxs`: the `nxs` CLI (what `nxs mcp install` registers when nxs is not on PATH)."""

from nxs.cli import main

main()
