"""The package list only; everything else is in pyproject.toml.

Discovered, never written by hand: a hand-written list dropped ``transcript_tools.eval``
from every wheel while ``pip install -e`` (and so every test) still worked.
``[tool.setuptools.packages.find]`` cannot say it alone: ``transcript_tools.prompts`` lives
in the top-level ``prompts/`` folder (pyproject.toml's ``package-dir``), where no finder
looks for it. tests/test_packaging.py checks the built wheel against the source tree.
"""

from setuptools import find_namespace_packages, setup

# Namespace discovery: a folder of modules (or of data files: policy presets) ships even
# without an __init__.py.
found = find_namespace_packages(
    include=["transcript_tools", "transcript_tools.*"], exclude=["*.__pycache__"]
)
setup(packages=[*found, "transcript_tools.prompts"])
