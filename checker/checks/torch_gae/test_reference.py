"""The reference gae equals two public implementations re-typed offline and the published formula's special cases:
CleanRL's ppo.py GAE loop (vwxyzjn/cleanrl, time first, dones stored one step later), OpenAI Spinning Up's PPOBuffer
(finish_path: per episode, discount_cumsum of the TD residuals with γλ, the last value 0 at a terminal state and the
bootstrap where the rollout is cut), and Schulman et al. 2016, eq. 17-18: GAE(γ, 0) = δ_t, GAE(γ, 1) = the
discounted return minus V(s_t)."""

import numpy as np
import pytest
import torch

from checker import catalogue, engine
from checker.checks.torch_gae import checks as spec

solution = engine.load_solution(catalogue.find("gae"))
ALL = [*spec.CASES, spec.TIMING]


def _cleanrl(rewards, values, dones, next_value, next_done, gamma, gae_lambda):
    """CleanRL's loop, unchanged but for args.* -> arguments; (num_steps, num_envs), dones[t]: obs t starts anew."""
    advantages = torch.zeros_like(rewards)
    lastgaelam = 0
    num_steps = rewards.shape[0]
    for t in reversed(range(num_steps)):
        if t == num_steps - 1:
            nextnonterminal = 1.0 - next_done
            nextvalues = next_value
        else:
            nextnonterminal = 1.0 - dones[t + 1]
            nextvalues = values[t + 1]
        delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
        advantages[t] = lastgaelam = delta + gamma * gae_lambda * nextnonterminal * lastgaelam
    returns = advantages + values
    return advantages, returns


def _discount_cumsum(x, discount):
    """Spinning Up's core.discount_cumsum (there scipy.signal.lfilter), as the loop it stands for."""
    out, running = np.zeros_like(x), 0.0
    for i in reversed(range(len(x))):
        running = x[i] + discount * running
        out[i] = running
    return out


def _spinning_up(rewards, values, dones, last_value, gamma, lam):
    """PPOBuffer.finish_path on each episode of each row: last_val 0 after a done, the bootstrap at the cut."""
    adv = np.zeros_like(rewards)
    for b in range(rewards.shape[0]):
        start = 0
        for t in range(rewards.shape[1]):
            end_of_row = t == rewards.shape[1] - 1
            if dones[b, t] or end_of_row:
                last_val = 0.0 if dones[b, t] else last_value[b]
                rews = np.append(rewards[b, start:t + 1], last_val)
                vals = np.append(values[b, start:t + 1], last_val)
                deltas = rews[:-1] + gamma * vals[1:] - vals[:-1]
                adv[b, start:t + 1] = _discount_cumsum(deltas, gamma * lam)
                start = t + 1
    return adv


@pytest.mark.parametrize("c", ALL, ids=lambda c: c.label)
def test_reference_equals_cleanrl_with_its_done_convention(c):
    rewards, values, dones, last_value, gamma, lam = spec.inputs(c, "float64")
    shifted = torch.cat([torch.zeros_like(dones[:, :1]), dones[:, :-1]], dim=1)  # CleanRL: obs t starts anew
    want_a, want_r = _cleanrl(rewards.T, values.T, shifted.T, last_value.reshape(1, -1), dones[:, -1], gamma, lam)
    got_a, got_r = solution.gae(rewards, values, dones, last_value, gamma, lam)
    torch.testing.assert_close(got_a, want_a.T, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(got_r, want_r.T, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("c", ALL, ids=lambda c: c.label)
def test_reference_equals_spinning_up_per_episode(c):
    rewards, values, dones, last_value, gamma, lam = spec.inputs(c, "float64")
    want = _spinning_up(rewards.numpy(), values.numpy(), dones.numpy(), last_value.numpy(), gamma, lam)
    got, _ = solution.gae(rewards, values, dones, last_value, gamma, lam)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_lambda_0_gives_the_td_residuals_and_lambda_1_the_discounted_returns(c):
    rewards, values, dones, last_value, gamma, _ = spec.inputs(c, "float64")
    nxt = torch.cat([values[:, 1:], last_value[:, None]], dim=1)
    delta = rewards + gamma * nxt * (1 - dones) - values
    torch.testing.assert_close(solution.gae(rewards, values, dones, last_value, gamma, 0.0)[0], delta,
                               rtol=1e-12, atol=1e-12)
    ret = torch.zeros_like(rewards)  # Σ_l γ^l r_(t+l) within the episode, + γ^(T-t) V(s_T) if never done
    running = last_value.clone()
    for t in reversed(range(rewards.shape[1])):
        running = rewards[:, t] + gamma * (1 - dones[:, t]) * running
        ret[:, t] = running
    advantages, returns = solution.gae(rewards, values, dones, last_value, gamma, 1.0)
    torch.testing.assert_close(advantages, ret - values, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(returns, ret, rtol=1e-10, atol=1e-10)


def test_the_cases_hold_what_their_comment_says():
    for c in spec.CASES:
        dones = spec.inputs(c, "float64")[2]
        assert dones[0, c.T // 2 - 1] == 1 and dones[-1].sum() == 0
        if c.B >= 3:
            assert dones[1, -1] == 1


@pytest.mark.parametrize("mistake", spec.MISTAKES, ids=lambda m: m.name)
def test_every_named_mistake_changes_the_advantages_on_every_case(mistake):
    for c in spec.CASES:
        args = spec.inputs(c, "float64")
        assert not torch.allclose(mistake.impl(*args)[0], solution.gae(*args)[0], rtol=1e-6)
