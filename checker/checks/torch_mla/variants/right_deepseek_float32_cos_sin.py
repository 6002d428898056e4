# followup: as DeepSeek-V2's released code does
"""HF DeepseekV2Attention adapted, cos/sin cache in float32 as HF builds it: the DeepSeek convention within float32 accuracy."""
# HF DeepseekV2Attention (q_lora_rank=None), adapted: separate W_dkv / W_kr, released apply_rotary_pos_emb
import math

import torch
import torch.nn.functional as F
from torch import nn


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, position_ids, unsqueeze_dim=1):
    cos = cos[position_ids].unsqueeze(unsqueeze_dim)
    sin = sin[position_ids].unsqueeze(unsqueeze_dim)
    b, h, s, d = q.shape
    q = q.view(b, h, s, d // 2, 2).transpose(4, 3).reshape(b, h, s, d)
    b, h, s, d = k.shape
    k = k.view(b, h, s, d // 2, 2).transpose(4, 3).reshape(b, h, s, d)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


class MultiHeadLatentAttention(nn.Module):
    def __init__(self, d_model, num_heads, d_latent, d_nope, d_rope, d_v, base=10000.0):
        super().__init__()
        self.num_heads = num_heads
        self.qk_nope_head_dim, self.qk_rope_head_dim, self.v_head_dim = d_nope, d_rope, d_v
        self.q_head_dim = d_nope + d_rope
        self.rope_theta = base
        self.W_q = nn.Linear(d_model, num_heads * self.q_head_dim, bias=False)
        self.W_dkv = nn.Linear(d_model, d_latent, bias=False)
        self.W_kr = nn.Linear(d_model, d_rope, bias=False)
        self.W_uk = nn.Linear(d_latent, num_heads * d_nope, bias=False)
        self.W_uv = nn.Linear(d_latent, num_heads * d_v, bias=False)
        self.W_o = nn.Linear(num_heads * d_v, d_model, bias=False)
        self.softmax_scale = self.q_head_dim ** (-0.5)

    def _cos_sin(self, seq_len, x):
        inv_freq = 1.0 / (self.rope_theta ** (torch.arange(0, self.qk_rope_head_dim, 2, dtype=torch.float32,
                                                             device=x.device) / self.qk_rope_head_dim))
        t = torch.arange(seq_len, device=x.device, dtype=torch.float32)
        freqs = torch.outer(t, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)

    def forward(self, hidden_states, c_cache=None, k_rope_cache=None):
        bsz, q_len, _ = hidden_states.size()
        past = 0 if c_cache is None else c_cache.shape[1]
        q = self.W_q(hidden_states).view(bsz, q_len, self.num_heads, self.q_head_dim).transpose(1, 2)
        q_nope, q_pe = torch.split(q, [self.qk_nope_head_dim, self.qk_rope_head_dim], dim=-1)
        compressed_kv = self.W_dkv(hidden_states)
        k_pe = self.W_kr(hidden_states).view(bsz, q_len, 1, self.qk_rope_head_dim).transpose(1, 2)
        position_ids = torch.arange(past, past + q_len, device=hidden_states.device)[None]
        cos, sin = self._cos_sin(past + q_len, hidden_states)
        q_pe, k_pe = apply_rotary_pos_emb(q_pe, k_pe, cos, sin, position_ids)
        k_pe = k_pe.transpose(1, 2).reshape(bsz, q_len, self.qk_rope_head_dim)
        if c_cache is not None:
            compressed_kv = torch.cat([c_cache, compressed_kv], dim=1)
            k_pe = torch.cat([k_rope_cache, k_pe], dim=1)
        kv_seq_len = compressed_kv.shape[1]
        kv = torch.cat([self.W_uk(compressed_kv).view(bsz, kv_seq_len, self.num_heads, self.qk_nope_head_dim),
                        self.W_uv(compressed_kv).view(bsz, kv_seq_len, self.num_heads, self.v_head_dim)],
                       dim=-1).transpose(1, 2)
        k_nope, value_states = torch.split(kv, [self.qk_nope_head_dim, self.v_head_dim], dim=-1)
        query_states = torch.cat([q_nope, q_pe], dim=-1)
        key_states = torch.cat([k_nope, k_pe[:, None].expand(-1, self.num_heads, -1, -1)], dim=-1)
        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) * self.softmax_scale
        causal = torch.full((q_len, kv_seq_len), torch.finfo(attn_weights.dtype).min, device=hidden_states.device,
                            dtype=attn_weights.dtype).triu(past + 1)
        attn_weights = attn_weights + causal
        attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)
        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2).reshape(bsz, q_len, self.num_heads * self.v_head_dim)
        return self.W_o(attn_output), compressed_kv, k_pe
