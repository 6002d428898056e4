"""No loop: Schulman et al. 2016, eq. 16, as the sum it is, A_t = Σ_(k≥t) δ_k · Π_(t≤j<k) γλ(1 - d_j), with every
product of decays in a (B, T, T) matrix built by one cumprod over an upper triangle."""
import torch


def gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    if not (0.0 <= gamma <= 1.0 and 0.0 <= lam <= 1.0):
        raise ValueError("gamma and lam must lie in [0, 1]")
    B, T = rewards.shape
    keep = 1.0 - dones
    next_values = torch.cat([values[:, 1:], last_value[:, None]], dim=1)
    deltas = rewards + gamma * next_values * keep - values  # (B, T)
    decay = gamma * lam * keep  # (B, T)
    upper = torch.ones(T, T, dtype=torch.bool, device=rewards.device).triu()  # [t, j]: j >= t
    factors = torch.where(upper, decay[:, None, :], torch.ones_like(decay)[:, None, :])  # (B, T, T)
    prods = torch.cumprod(factors, dim=2)  # [b, t, j] = Π_(t≤i≤j) decay
    weights = torch.cat([torch.ones_like(prods[:, :, :1]), prods[:, :, :-1]], dim=2) * upper  # Π_(t≤i<k)
    advantages = torch.einsum("btk,bk->bt", weights, deltas)
    return advantages, advantages + values
