"""The one thing pyproject.toml cannot say: discovered packages plus the mapped prompts/.

``[tool.setuptools.packages.find]`` walks the file system, so it never finds
``transcript_tools.prompts``, which ``package-dir`` maps to the top-level ``prompts/``.
"""

from setuptools import find_packages, setup

setup(packages=[*find_packages(include=["transcript_tools*"]), "transcript_tools.prompts"])
