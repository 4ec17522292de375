"""Packages for setuptools (the rest of the metadata is in pyproject.toml).

simrl and envs are found as usual. The repo keeps its data at the top level (assets/: MJCF;
configs/: the Hydra configs), and a wheel ships both inside simrl as the packages simrl._assets
and simrl._configs (every subfolder included, so a new robot or config group needs no edit
here). simrl.ASSETS and simrl.CONFIGS point at those copies when installed, and at the
checkout's folders when running from the repo or an editable install.
"""

from setuptools import find_namespace_packages, find_packages, setup

DATA = {"simrl._assets": "assets", "simrl._configs": "configs"}  # package -> top-level folder

packages = find_packages(include=["simrl", "simrl.*", "envs", "envs.*"])
package_data = {"simrl": ["py.typed"]}
for package, folder in DATA.items():
    for sub in ["", *(f".{name}" for name in find_namespace_packages(where=folder))]:
        packages.append(package + sub)
        package_data[package + sub] = ["*"]  # every file, each folder its own package

setup(packages=packages, package_dir=DATA, package_data=package_data)
