"""The local web dashboard (`nxs ui`, docs/ui.md): `server` serves the page shipped beside it
and its API over the operations, `guard` decides who may talk to it."""
