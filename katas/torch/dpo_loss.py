"""The DPO loss (Direct Preference Optimization), from per-token log-probabilities, from scratch.

Shape legend:
    B    number of preference pairs (prompt, chosen response, rejected response)
    T_c  length of the chosen sequences (prompt + response + padding)
    T_r  length of the rejected sequences (its own length: the two are padded separately)

Implement dpo_loss (Rafailov et al. 2023, "Direct Preference Optimization: Your Language Model is
Secretly a Reward Model", eq. 7), the objective TRL's DPOTrainer minimises (loss_type="sigmoid"):

    log π(y|x)  = Σ_t mask[t] · logps[t]            SUM over the response tokens, per sequence
    z           = β · ((log π(y_c) − log π_ref(y_c)) − (log π(y_r) − log π_ref(y_r)))
    loss        = mean over the B pairs of −log σ(z)
    rewards     = β · (log π(y) − log π_ref(y))     the implicit rewards, per pair, DETACHED

y_c is the chosen (preferred) response, y_r the rejected one; π is the policy being trained,
π_ref the frozen reference (the SFT model). −log σ(z) must be computed stably: z reaches ±1000
when β is large or the responses are long, and log(sigmoid(z)) is −inf there
(F.logsigmoid(z) or −F.softplus(−z) are stable).

Arguments:
    policy_chosen_logps    (B, T_c) float: log π(token | prefix) of each token of the chosen sequence
    policy_rejected_logps  (B, T_r) float: the same for the rejected sequence
    ref_chosen_logps       (B, T_c) float: log π_ref of each chosen token
    ref_rejected_logps     (B, T_r) float: log π_ref of each rejected token
    chosen_mask            (B, T_c) bool: True at the response tokens that count; False at the prompt
                           and at padding (their logps hold values that must not count)
    rejected_mask          (B, T_r) bool: the same for the rejected sequence
    beta                   float β > 0, default 0.1 (the paper's and TRL's), the strength of the
                           implicit KL penalty to the reference
returns (loss, chosen_rewards, rejected_rewards):
    loss              () scalar tensor of the inputs' dtype, the mean over the B pairs
    chosen_rewards    (B,) β · (log π(y_c) − log π_ref(y_c)), detached (for logging, as TRL does)
    rejected_rewards  (B,) β · (log π(y_r) − log π_ref(y_r)), detached
A response with no True in its mask has log π(y) = 0. The loss's gradient must reach the policy's
log-probabilities (the reference's come from a frozen model: detaching them changes nothing here).

Rules: do not modify the inputs. F.logsigmoid and F.softplus are allowed.
Off limits: trl (its DPOTrainer.dpo_loss).
"""

import torch
import torch.nn.functional as F
from torch import Tensor


def dpo_loss(policy_chosen_logps: Tensor, policy_rejected_logps: Tensor, ref_chosen_logps: Tensor,
             ref_rejected_logps: Tensor, chosen_mask: Tensor, rejected_mask: Tensor,
             beta: float = 0.1) -> tuple[Tensor, Tensor, Tensor]:
    raise NotImplementedError("write dpo_loss: masked sums, the log-ratio margin, -logsigmoid, the mean; and the rewards")
