"""Generalised advantage estimation, GAE(γ, λ), from scratch.

Shape legend:
    B  batch: environments, or sequences (one episode each, or several)
    T  time steps (rollout length)

Implement GAE (Schulman et al. 2016, "High-Dimensional Continuous Control Using Generalized
Advantage Estimation", eq. 16), as PPO implementations compute it (CleanRL's ppo.py, TRL's PPO
trainer): TD residuals, then a REVERSE scan over the time steps.

    next value   V(s_{t+1}) = values[:, t + 1] for t < T - 1, and last_value for t = T - 1 (the bootstrap)
    δ_t  = r_t + γ · V(s_{t+1}) · (1 - d_t) - V(s_t)
    A_t  = δ_t + γ · λ · (1 - d_t) · A_{t+1},      A_T = 0
    returns_t = A_t + V(s_t)                       (the value function's targets)

The done convention: dones[:, t] = 1.0 means the episode ENDED AFTER step t (step t's reward is the
last of its episode). Then s_{t+1} belongs to a new episode: it contributes neither its value to
δ_t nor its advantage to A_t. A done at the last step also cuts the bootstrap value. (CleanRL and
Stable-Baselines3 store the flag one step later, as "obs t starts a new episode"; this contract does
not.)

Arguments:
    rewards     (B, T) float: r_t, the reward received after the action at step t
    values      (B, T) float: V(s_t), the critic's value of the state at step t
    dones       (B, T) float, rewards' dtype, each 0.0 or 1.0: 1.0 where the episode ended after step t
    last_value  (B,)   float: V(s_T), the value of the state after the last step (the bootstrap)
    gamma       float γ in [0, 1], default 0.99: the discount
    lam         float λ in [0, 1], default 0.95: λ = 0 gives the one-step TD residuals δ_t, λ = 1 the
                Monte-Carlo returns minus the values
returns (advantages, returns), each (B, T), rewards' dtype.

Edge values: T = 1 (only the bootstrap follows); every step done (A = δ = r - V); γ = 1 and λ = 1.
Raise ValueError if gamma or lam lies outside [0, 1].
No gradient is needed through the outputs: they are targets (the caller passes detached values).
Rules: do not modify the inputs.
Off limits: trl, stable_baselines3.
"""

import torch
from torch import Tensor


def gae(rewards: Tensor, values: Tensor, dones: Tensor, last_value: Tensor, gamma: float = 0.99,
        lam: float = 0.95) -> tuple[Tensor, Tensor]:
    raise NotImplementedError("write gae: TD residuals, then a reverse scan A_t = δ_t + γλ(1 - d_t) A_{t+1}")
