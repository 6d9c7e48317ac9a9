"""`python -m nxm`: the `nxm` CLI, for a checkout run without installing it."""

from nxm.cli import main

main()
