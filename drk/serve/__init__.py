"""``drk serve``: the evaluation environment as an HTTP service, in the field names of the authors' KernelGYM API.

Modules, one job each: :mod:`~drk.serve.kernelgym` (the wire format mapped onto ``EvalConfig``/``EvalResult``, pure),
:mod:`~drk.serve.models` (pydantic bodies), :mod:`~drk.serve.store` (SQLite persistence),
:mod:`~drk.serve.engine` (worker threads over :class:`drk.gym.Pool`), :mod:`~drk.serve.guard` (token and size
limits), :mod:`~drk.serve.app` (the FastAPI routes), :mod:`~drk.serve.cli` (the command). The client is
:class:`drk.gym.RemoteEvaluator`. Nothing is imported here, so the client does not need the server's packages.
See ``docs/kernelgym.md``.
"""
