"""vLLM's apply_penalties and get_token_bin_counts_and_mask (vllm/model_executor/layers/utils.py), re-typed for one
list of generated tokens per row: bin counts over vocab_size + 1 bins (the last one for padding), a repetition
penalty tensor of 1.0 wherever the token was not seen, torch.where(logits > 0, logits / p, logits * p), then
logits -= frequency_penalties * counts and logits -= presence_penalties * mask."""
import torch


def get_token_bin_counts_and_mask(tokens, vocab_size, num_seqs):
    bin_counts = torch.zeros((num_seqs, vocab_size + 1), dtype=torch.long, device=tokens.device)
    bin_counts.scatter_add_(1, tokens, torch.ones_like(tokens))
    bin_counts = bin_counts[:, :vocab_size]
    mask = bin_counts > 0
    return bin_counts, mask


def apply_penalties(logits, generated, penalty=1.0, frequency_penalty=0.0, presence_penalty=0.0):
    num_seqs, vocab_size = logits.shape
    output_bin_counts, output_mask = get_token_bin_counts_and_mask(generated, vocab_size, num_seqs)
    repetition_penalties = torch.full((num_seqs, 1), penalty, dtype=logits.dtype).repeat(1, vocab_size)
    repetition_penalties[~output_mask] = 1.0
    logits = torch.where(logits > 0, logits / repetition_penalties, logits * repetition_penalties)
    frequency_penalties = torch.full((num_seqs,), frequency_penalty, dtype=logits.dtype)
    presence_penalties = torch.full((num_seqs,), presence_penalty, dtype=logits.dtype)
    logits -= frequency_penalties.unsqueeze(dim=1) * output_bin_counts
    logits -= presence_penalties.unsqueeze(dim=1) * output_mask
    return logits
