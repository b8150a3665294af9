"""The Ray-backed pool on a local Ray instance (one start, ~20 s, shared by the tests here)."""

import pytest

ray = pytest.importorskip("ray")

from drk.examples import EXPECTED, example_candidate, example_problem  # noqa: E402
from drk.gym import EvalConfig  # noqa: E402
from drk.gym.ray_pool import RayPool  # noqa: E402

pytestmark = pytest.mark.ray


@pytest.fixture(scope="module")
def ray_pool():
    pool = RayPool(num_actors=2, device="cpu", workers=1, config=EvalConfig(timeout_s=30),
                   init_kwargs={"num_cpus": 2, "log_to_driver": False})
    yield pool
    pool.shutdown()
    ray.shutdown()


def test_ray_pool_matches_local_verdicts_in_order(ray_pool):
    problem = example_problem()
    names = ["good", "decoy", "wrong", "segfault", "lazy"]
    results = ray_pool.map([(problem, example_candidate(n)) for n in names])
    assert [r.status for r in results] == [EXPECTED[n][0] for n in names]
    assert "decoy" in results[1].hack_reasons


def test_lost_actor_yields_results_not_exceptions(ray_pool):
    problem = example_problem()
    ray.kill(ray_pool._actors[1])
    results = ray_pool.map([(problem, example_candidate("good")), (problem, example_candidate("wrong"))])
    assert results[0].status == "correct"
    assert results[1].status == "runtime_error" and "ray actor failed" in results[1].error
