"""A task defined outside simrl: registered by name, found by the apps through SIMRL_TASKS."""

import pytest

from simrl.errors import ConfigError
from simrl.registry import TASKS, load_user_tasks, register_task


def test_register_refuses_a_taken_name():
    with pytest.raises(ConfigError, match="task 'cartpole' already exists"):
        register_task("cartpole", "elsewhere:OtherCfg")


def test_a_module_that_does_not_import_is_named(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SIMRL_TASKS", "no_such_tasks_module")
    with pytest.raises(ConfigError, match="SIMRL_TASKS names 'no_such_tasks_module', which does not import"):
        load_user_tasks()


def test_a_module_in_the_working_directory_registers_its_task(monkeypatch, tmp_path):
    (tmp_path / "tiny_tasks.py").write_text(
        "import simrl\nsimrl.register_task('tiny_cartpole', 'simrl.envs.cartpole:CartpoleCfg')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SIMRL_TASKS", "tiny_tasks")
    monkeypatch.setitem(TASKS, "placeholder", TASKS["cartpole"])  # restored after the test
    try:
        assert load_user_tasks() == ["tiny_tasks"]
        assert TASKS["tiny_cartpole"][1] == "simrl.envs.cartpole:CartpoleCfg"
        import simrl

        env = simrl.make("tiny_cartpole", 4, device="cpu")
        assert env.num_envs == 4
    finally:
        TASKS.pop("tiny_cartpole", None)
