"""Packages for setuptools (the rest of the metadata is in pyproject.toml).

The repo keeps its tasks and data at the top level (envs/: the tasks; assets/: MJCF; configs/:
the Hydra configs), and a wheel ships all three inside simrl, as simrl.envs, simrl._assets and
simrl._configs (every subfolder included, so a new robot or config group needs no edit here):
an installed simrl claims no top-level name but its own. simrl.ASSETS and simrl.CONFIGS point at
those copies when installed, and at the checkout's folders when running from the repo or an
editable install; a checkout imports envs/ as simrl.envs too (simrl.paths.CheckoutTasks).
"""

from setuptools import find_namespace_packages, find_packages, setup

DATA = {"simrl._assets": "assets", "simrl._configs": "configs"}  # package -> top-level folder
TASKS = {"simrl.envs": "envs"}

packages = find_packages(include=["simrl", "simrl.*"])
packages += ["simrl.envs", *(f"simrl.envs.{p}" for p in find_packages(where="envs"))]
package_data = {"simrl": ["py.typed"], "simrl.zoo": ["index.yaml", "*/policy.onnx", "*/policy.json"]}
for package, folder in DATA.items():
    for sub in ["", *(f".{name}" for name in find_namespace_packages(where=folder))]:
        packages.append(package + sub)
        package_data[package + sub] = ["*"]  # every file, each folder its own package

setup(packages=packages, package_dir={**TASKS, **DATA}, package_data=package_data)
