"""drk: an open reproduction of *Dr. Kernel* (RL for Triton kernel generation).

Subpackages, by pipeline stage:
    drk.gym      the kernel-evaluation environment (our KernelGYM)
    drk.rl       advantages, rewards, rejection sampling (pure functions)
    drk.metrics  Fast@p and friends
    drk.train    the multi-turn trainer built on TRL
    drk.eval     evaluation of policies and test-time scaling
    drk.figures  every paper figure and table, as functions of data
"""

__version__ = "0.2.0"  # 0.2: the judge/sandbox split (issue 11); older cached verdicts are not reused
