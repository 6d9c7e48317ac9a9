"""`nxs.deferred`: a stand-in costs nothing until used, then is the real module."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
from nxs.deferred import deferred, stand_in
assert stand_in("colorsys", ["rgb_to_hsv"])
assert not stand_in("colorsys", ["rgb_to_hsv"])  # one stand-in per module
from colorsys import rgb_to_hsv
print(deferred("colorsys"), "colorsys" in sys.modules)
print(rgb_to_hsv(0.2, 0.4, 0.4), deferred("colorsys"))
import colorsys
print(colorsys.ONE_THIRD, type(sys.modules["colorsys"]).__name__)
assert stand_in("fractions", ["Fraction"])
from fractions import Fraction
one = Fraction(1, 3)
print(isinstance(one, Fraction), issubclass(type(one), Fraction), Fraction.from_float(0.5))
print(repr(Fraction) == "<deferred fractions.Fraction>", hasattr(Fraction, "__no_such_dunder__"))
"""


def test_a_stand_in_loads_the_real_module_on_first_use() -> None:
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "True True",
        "(0.5, 0.5, 0.4) False",
        "0.3333333333333333 module",
        "True True 1/2",
        "True False",
    ]
