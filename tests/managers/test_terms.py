"""Terms with parameters (simrl.managers.terms): entries, binding, name resolution, and their errors."""

from __future__ import annotations

import mujoco
import pytest
import torch

import simrl
from simrl.errors import ConfigError, UnknownNameError
from simrl.managers.terms import bind, resolve, reward_terms


def test_reward_entries_weight_or_dict():
    terms = reward_terms({"alive": 1.0, "fine": {"weight": -2, "func": "ee_pos_tanh",
                                                  "params": {"std": 0.1}}})
    assert [(t.name, t.func, t.weight, t.params) for t in terms] == [
        ("alive", "alive", 1.0, {}), ("fine", "ee_pos_tanh", -2.0, {"std": 0.1})]
    with pytest.raises(ConfigError, match="weight \\(required\\)"):
        reward_terms({"x": {"params": {}}})
    with pytest.raises(ConfigError, match="weight must be a number"):
        reward_terms({"x": {"weight": "high"}})
    with pytest.raises(ConfigError, match=r"reward 'x': unknown keys \['time_out'\]; an entry takes func, "
                                          r"params, weight \(required\)"):
        reward_terms({"x": {"weight": 1.0, "time_out": True}})  # another kind's key


class _Env:
    def __init__(self):
        self.model = mujoco.MjModel.from_xml_string(
            "<mujoco><worldbody><body name='arm'><joint name='j1'/><geom size='.1'/>"
            "<site name='tip'/><body name='hand'><joint name='j2'/><geom size='.1'/>"
            "<site name='tool'/></body></body></worldbody></mujoco>")
        self.device = torch.device("cpu")


def test_bind_resolves_names_once():
    env = _Env()

    def term(env, site: int, bodies: torch.Tensor, std: float = 1.0):
        return site, bodies, std

    f = bind(env, term, {"site": "tool", "bodies": ["hand", "a.*"], "std": 0.5}, "reward term 't'")
    site, bodies, std = f(env)
    assert site == env.model.site("tool").id
    assert bodies.tolist() == [env.model.body("hand").id, env.model.body("arm").id]
    assert std == 0.5
    assert resolve(env.model, mujoco.mjtObj.mjOBJ_JOINT, "j.*", "x") == [0, 1]


def test_bind_errors_name_the_problem():
    env = _Env()

    def term(env, site: int):
        return site

    with pytest.raises(UnknownNameError, match="site 'gripper' matches nothing.*valid: \\['tip', 'tool'\\]"):
        bind(env, term, {"site": "gripper"}, "reward term 't'")
    with pytest.raises(ConfigError, match="must name one object, matches 2"):
        bind(env, term, {"site": "t.*"}, "reward term 't'")
    with pytest.raises(ConfigError, match="unknown params \\['sigma'\\]; valid: \\['site'\\]"):
        bind(env, term, {"site": "tip", "sigma": 1}, "reward term 't'")
    with pytest.raises(ConfigError, match="reward term 't': params \\['site'\\] are required"):
        bind(env, term, {}, "reward term 't'")


def test_param_rules_refuse_a_bad_value_once_at_binding():
    from simrl.managers.terms import NON_NEGATIVE, POSITIVE, UNIT_OPEN, param_rules

    env = _Env()

    @param_rules(std=POSITIVE, share=UNIT_OPEN, floor=NON_NEGATIVE)
    def term(env, std: float = 0.1, share: float = 0.5, floor: float | None = None):
        return std

    assert bind(env, term, {"std": 2.0, "floor": 0.0}, "reward term 't'")(env) == 2.0
    assert bind(env, term, {}, "reward term 't'")(env) == 0.1  # the defaults pass too
    for params, msg in [({"std": 0.0}, "param std must be a finite number > 0, got 0.0"),
                        ({"std": float("nan")}, "param std must be a finite number > 0, got nan"),
                        ({"std": "wide"}, "param std must be a finite number > 0, got 'wide'"),
                        ({"share": 1.0}, "param share must be a share in \\(0, 1\\), got 1.0"),
                        ({"floor": [0.0, -1.0]}, "param floor must be a finite number >= 0")]:
        with pytest.raises(ConfigError, match=f"reward term 't': {msg}"):
            bind(env, term, params, "reward term 't'")


def test_a_task_term_with_a_bad_param_stops_the_start_up_with_its_name():
    """Shipped terms declare their rules: a zero width or a stance of 1 would give inf/NaN."""
    with pytest.raises(ConfigError, match="reward term 'ee_pos_fine': param std must be a finite number > 0"):
        simrl.make("reach", 1, device="cpu", cfg={"rewards": {"ee_pos_fine": {
            "weight": 1.0, "func": "ee_pos_tanh", "params": {"site": "attachment_site", "std": 0.0}}}})
    with pytest.raises(ConfigError, match="reward term 'feet_height_phase': param stance must be a share in"):
        simrl.make("humanoid", 1, device="cpu", cfg={"rewards": {"feet_height_phase": {
            "weight": 1.0, "params": {"stance": 1.0}}}})
    with pytest.raises(ConfigError, match=r"'feet_air_time': params must satisfy floor <= cap, got "
                                          r"\{'floor': 0.3, 'cap': 0.1\}"):  # clamp would give cap
        simrl.make("quadruped", 1, device="cpu", cfg={"rewards": {"feet_air_time": {
            "weight": 1.0, "params": {"floor": 0.3, "cap": 0.1}}}})
    assert simrl.make("quadruped", 1, device="cpu", cfg={"rewards": {"feet_air_time": {
        "weight": 1.0, "params": {"floor": 0.0, "cap": 0.2}}}}).num_envs == 1
    with pytest.raises(ConfigError, match="'posture': param std_by_joint must be a finite number > 0"):
        simrl.make("humanoid", 1, device="cpu", cfg={"rewards": {"posture": {
            "weight": 1.0, "params": {"std_by_joint": {".*knee.*": 0.0, ".*": 0.5}}}}})


def test_task_config_reward_with_params_reaches_the_term():
    """A reward entry's params change what the term computes (here a tanh kernel's width)."""
    wide = simrl.make("reach", 2, device="cpu", seed=0,
                      cfg={"rewards": {"ee_pos_fine": {"weight": 1.0, "func": "ee_pos_tanh",
                                                       "params": {"site": "attachment_site", "std": 10.0}}}})
    narrow = simrl.make("reach", 2, device="cpu", seed=0)
    a = torch.zeros(2, 7)
    for env in (wide, narrow):
        env.step(a)
    assert wide.episode_sums["ee_pos_fine"].mean() > 5 * narrow.episode_sums["ee_pos_fine"].mean()
    with pytest.raises(UnknownNameError, match="site 'flange' matches nothing"):
        simrl.make("reach", 1, device="cpu", cfg={"rewards": {"ee_pos_error": {
            "weight": -1.0, "params": {"site": "flange"}}}})


def test_a_term_twice_in_one_group_is_refused():
    from simrl.env import ObsTerm

    with pytest.raises(ConfigError, match="group 'policy' lists \\['joint_pos'\\] more than once"):
        simrl.make("reach", 1, device="cpu", cfg={"observations": {"policy": [
            ObsTerm("joint_pos"), ObsTerm("joint_pos", scale=2.0)]}})


def test_an_observation_term_declares_its_read_and_mirror_beside_it():
    from simrl.managers.observation import deploy_read, observation

    @observation(read=lambda params: {"reading": "policy_time", "args": dict(params)}, mirror=lambda env: "m")
    def clock(env, period=1.0):
        return env

    assert deploy_read(clock, {"period": 0.4}) == {"reading": "policy_time", "args": {"period": 0.4}}
    assert clock.mirror(None) == "m"
    plain = observation(lambda env: env)  # declared with neither: privileged, no mirror
    assert deploy_read(plain, {}) is None and plain.mirror is None


def test_symmetry_over_a_term_that_declares_no_mirror_names_it():
    import simrl
    from simrl.errors import ConfigError

    env = simrl.make("quadruped", 2, device="cpu", seed=0)
    env.OBS_TERMS = {**env.OBS_TERMS, "ground_friction": lambda env: env.legged.mu}  # undeclared
    with pytest.raises(ConfigError, match=r"term 'ground_friction' in group 'critic' has no mirror.*"
                                          r"@observation\(mirror=\.\.\.\)"):
        env.mirror_maps()
