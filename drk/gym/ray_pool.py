"""The evaluation pool beyond one machine, on Ray.

One :class:`_PoolActor` per node (or per GPU), each wrapping a local :class:`drk.gym.Pool`, so every guarantee of
the local pool holds inside each actor: sandboxed children, one timing at a time per GPU, the result cache. The
driver splits a batch across actors and reassembles results in input order; an actor that dies costs only its
own share, which comes back as ``runtime_error`` results rather than an exception.

Install with ``pip install 'drk[ray]'``; connect with ``RayPool(address="auto")`` on a cluster, or let it start
a local instance.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from drk.gym.config import EvalConfig
from drk.gym.pool import Pair, Pool
from drk.gym.problem import Problem
from drk.gym.result import EvalResult


class _PoolActor:
    """Runs a local Pool on whichever node Ray placed it."""

    def __init__(self, device: str, workers: int | None, cache_dir: str | None, config: dict) -> None:
        self.pool = Pool(device=device, workers=workers, cache_dir=cache_dir, config=EvalConfig.from_dict(config),
                         progress=False)

    def map(self, items: list[tuple[dict, str]], config: dict) -> list[dict]:
        pairs = [(Problem(**problem), candidate) for problem, candidate in items]
        return [r.to_dict() for r in self.pool.map(pairs, EvalConfig.from_dict(config))]


class RayPool:
    """Same interface as :class:`drk.gym.Pool` (``map``), backed by Ray actors.

    Args:
        num_actors: actors to start (e.g. one per GPU node); each runs ``workers`` concurrent evaluations.
        device: device kind inside each actor (``"cuda"`` reserves ``gpus_per_actor`` GPUs per actor).
        address: a Ray cluster address (``"auto"``), or ``None`` to start/attach a local instance.
        init_kwargs: extra arguments to ``ray.init`` when it is called here.
    """

    def __init__(self, num_actors: int = 1, *, device: str = "auto", workers: int | None = None,
                 cache_dir: str | None = None, config: EvalConfig | None = None, gpus_per_actor: int = 1,
                 address: str | None = None, init_kwargs: dict[str, Any] | None = None) -> None:
        import ray

        if num_actors < 1:
            raise ValueError(f"num_actors must be >= 1, got {num_actors}")
        if not ray.is_initialized():
            ray.init(address=address, include_dashboard=False, **(init_kwargs or {}))
        self.config = config or EvalConfig()
        options = {"num_gpus": gpus_per_actor} if device == "cuda" else {"num_cpus": 1}
        actor_cls = ray.remote(_PoolActor).options(**options)
        self._actors = [actor_cls.remote(device, workers, cache_dir, self.config.to_dict()) for _ in range(num_actors)]

    def map(self, pairs: Iterable[Pair], config: EvalConfig | None = None) -> list[EvalResult]:
        """Evaluate every pair across the actors; results in input order, exactly one per pair."""
        import ray

        pairs = list(pairs)
        config = config or self.config
        shards: list[list[int]] = [list(range(i, len(pairs), len(self._actors))) for i in range(len(self._actors))]
        futures = []
        for actor, shard in zip(self._actors, shards):
            items = [(_problem_dict(pairs[i][0]), pairs[i][1]) for i in shard]
            futures.append(actor.map.remote(items, config.to_dict()) if items else None)
        results: list[EvalResult | None] = [None] * len(pairs)
        for shard, future in zip(shards, futures):
            if future is None:
                continue
            try:
                shard_results = [EvalResult.from_dict(d) for d in ray.get(future)]
            except Exception as exc:  # noqa: BLE001 - a lost actor loses only its share
                shard_results = [EvalResult(status="runtime_error", problem=pairs[i][0].name, env_error=True,
                                            error=f"[drk] ray actor failed: {type(exc).__name__}: {exc}"[:500])
                                 for i in shard]
            for i, result in zip(shard, shard_results):
                results[i] = result
        return results  # type: ignore[return-value]

    def shutdown(self) -> None:
        import ray

        for actor in self._actors:
            ray.kill(actor)
        self._actors = []


def _problem_dict(problem: Problem) -> dict:
    return {"name": problem.name, "source": problem.source, "level": problem.level,
            "problem_id": problem.problem_id, "path": problem.path}
