"""Reads a kata's statement (the one reader, for show, hint and solution) and draws it.

Reading: the Markdown in the language asked for, else in English; its sections and their items.
Drawing: the small part of Markdown the statements use, without markdown-it: headings, paragraphs,
lists, tables, code blocks (fenced or indented), `code` and **bold**. rich.markdown would do it
too, but importing it costs ~45 ms, which `kata show` cannot afford (issue 5: at most twice
`python -c "import rich.console"`).
"""

from __future__ import annotations

import ast
import re

from rich.console import Group
from rich.padding import Padding
from rich.text import Text

from checker.catalogue import Kata
from checker.lang import register, speaking, t
from checker.terminal import Hanging, Wrapped

# ----------------------------------------------------------------------------- reading

HINTS = ("## Hints", "## 提示")
PITFALLS = ("## Pitfalls", "## 易错点")
_NUMBERED = re.compile(r"\s*\d+\. (.*)")  # 1. a hint
_BULLET = re.compile(r"- (.*)")  # - a pitfall


def read(kata: Kata, lang: str) -> tuple[str, str]:
    """The statement's Markdown in lang if there is one, else in English: (text, its language)."""
    if not kata.statement_path(lang).exists():
        lang = "en"
    return kata.statement_path(lang).read_text(encoding="utf-8"), lang


def _bounds(lines: list[str], headings: tuple[str, ...]) -> tuple[int, int]:
    """(the line of the first of these headings, the line of the next '## ' heading); both len(lines) if absent."""
    start = next((i for i, line in enumerate(lines) if line.strip() in headings), len(lines))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return start, end


def section(markdown: str, headings: tuple[str, ...]) -> list[str]:
    """The lines under the first of these headings, up to the next '## ' heading."""
    lines = markdown.splitlines()
    start, end = _bounds(lines, headings)
    return lines[start + 1:end]


def without(markdown: str, headings: tuple[str, ...]) -> str:
    """The statement with the section under the first of these headings left out (kata show: the hints)."""
    lines = markdown.splitlines()
    start, end = _bounds(lines, headings)
    return "\n".join(lines[:start] + lines[end:]).rstrip() + "\n"


def items(lines: list[str], first: re.Pattern) -> list[str]:
    """The list items, each with its continuation lines joined; `first` matches an item's first line."""
    found: list[str] = []
    for line in lines:
        match = first.match(line)
        if match:
            found.append(match[1].strip())
        elif found and line.strip():
            found[-1] += " " + line.strip()
    return found


def hints(kata: Kata, lang: str = "en") -> list[str]:
    """The numbered items under Hints: concept, then shapes and steps, then near-code."""
    return items(section(read(kata, lang)[0], HINTS), _NUMBERED)


def pitfalls(kata: Kata, lang: str = "en") -> list[str]:
    """The bullet items under Pitfalls."""
    return items(section(read(kata, lang)[0], PITFALLS), _BULLET)


# ----------------------------------------------------------------------------- the reference's steps

STEP = re.compile(r"#\s*(\d+)\)\s*(.+)")


def steps(source: str, lang: str = "en") -> list[str]:
    """The reference answer's numbered step comments (`# 1) project`), each under the function it is in
    when several functions have steps; else the first line of each top-level docstring. In lang: every
    step has its Chinese in _ZH below, keyed by its English (tests/test_statement.py holds that)."""
    tree = ast.parse(source)
    functions = [(f"{cls.name}.{node.name}" if cls else node.name, node.lineno, node.end_lineno)
                 for cls in [None, *(n for n in tree.body if isinstance(n, ast.ClassDef))]
                 for node in (tree.body if cls is None else cls.body) if isinstance(node, ast.FunctionDef)]
    found = []  # (the function a step is in, "N) text")
    for number, line in enumerate(source.splitlines(), 1):
        match = STEP.search(line)
        if match:
            where = next((name for name, start, end in functions if start <= number <= end), "")
            found.append((where, match[1], match[2].strip()))
    with speaking(lang):
        if not found:
            return [f"{n.name}: {t(ast.get_docstring(n).splitlines()[0])}" for n in tree.body
                    if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(n)]
        several = len({where for where, _, _ in found}) > 1
        lines, last = [], None
        for where, number, text in found:
            if several and where != last:
                lines.append(f"{where}:")
                last = where
            lines.append(f"{'  ' if several else ''}{number}) {t(text)}")
        return lines


_ZH = register({
    "W_q, W_k, W_v, W_o: 4·D² (+ 4·D biases); independent of H since H · d_k = D.":
        "W_q、W_k、W_v、W_o：4·D²（偏置另加 4·D）；因为 H · d_k = D，与头数 H 无关。",
    "Self-attention + FFN + 2 LayerNorms: 12·D² when d_ff = 4·D, biases and LayerNorms aside.":
        "自注意力 + 前馈网络 + 2 个层归一化：d_ff = 4·D 时为 12·D²（不算偏置和层归一化）。",
    "Masked self-attention + cross-attention + FFN + 3 LayerNorms: 16·D² when d_ff = 4·D.":
        "掩码自注意力 + 交叉注意力 + 前馈网络 + 3 个层归一化：d_ff = 4·D 时为 16·D²。",
    "Embeddings + N encoder layers + N decoder layers + out_proj (its weight shared when tied).":
        "嵌入 + N 个编码器层 + N 个解码器层 + out_proj（权重共享时它的权重不再单独计数）。",
    "2 FLOPs per multiply-add over Q, K, V projections, Q_h K_hᵀ, A_h V_h and W_o.":
        "Q、K、V 投影、Q_h K_hᵀ、A_h V_h 和 W_o，每次乘加算 2 FLOPs。",
    "fc1 (B·T, D) x (D, d_ff) and fc2 (B·T, d_ff) x (d_ff, D), 2 FLOPs per multiply-add.":
        "fc1 (B·T, D) x (D, d_ff) 和 fc2 (B·T, d_ff) x (d_ff, D)，每次乘加算 2 FLOPs。",
    "K and V, each (B, num_kv_heads, T, d_k), in every layer, dtype.itemsize bytes per element.":
        "每一层的 K 和 V，各为 (B, num_kv_heads, T, d_k)，每个元素 dtype.itemsize 字节。",
    "evaluation, or nothing to drop: the identity (inverted dropout scales at training time only)":
        "评估模式，或没有要丢弃的：原样返回（inverted dropout 只在训练时缩放）",
    "everything dropped: zeros, never 0 / 0":
        "全部丢弃：返回全零，绝不计算 0 / 0",
    "a Bernoulli(1 - p) mask of x's shape, dtype and device, drawn with the caller's generator":
        "用调用方的 generator 抽一个 Bernoulli(1 - p) 掩码，形状、dtype 和 device 都与 x 相同",
    "batch statistics per channel; the biased variance normalises":
        "按通道计算批次统计量；归一化用有偏方差",
    "running statistics: an exponential moving average, with the UNBIASED variance":
        "滑动统计量：指数滑动平均，方差用无偏估计",
    "normalise, then scale and shift per channel":
        "归一化，再按通道缩放和平移",
    "decoupled weight decay, on the parameter before the update (not added to the gradient)":
        "解耦的权重衰减：在更新之前作用于参数（不加到梯度上）",
    "exponential moving averages of the gradient and of its square":
        "梯度及其平方的指数滑动平均",
    "bias correction (the averages start at 0), eps outside the root of the corrected v":
        "偏差修正（滑动平均从 0 开始），eps 加在修正后 v 的平方根之外",
    "the frozen path; once merged, it already holds the update":
        "冻结的主路径；合并之后它已经包含了增量",
    "the low-rank path: dropout on its input only, down to r, up to D_out, scaled":
        "低秩路径：只在它的输入上做 dropout，降到 r 维，再升到 D_out 维，然后缩放",
    "each distinct chunk once, as its bytes, with how often it occurs":
        "每个不同的片段只保留一份（按字节），并记下出现次数",
    "count every adjacent pair inside the chunks, weighted by the chunk's frequency":
        "统计片段内每一对相邻 token，按片段出现次数加权",
    "the most frequent pair; among equals the smallest (left, right)":
        "取出现最多的一对；次数相同时取 (left, right) 最小的",
    "merge it everywhere: it becomes token 256 + rank":
        "在所有地方合并它：它成为 token 256 + rank",
    "half the buckets for keys before the query (and the query itself), half for keys after it":
        "一半的桶给查询之前的键（含查询自身），另一半给查询之后的键",
    "causal: a future key (relative_position > 0) shares bucket 0 with the query itself":
        "因果：未来的键（relative_position > 0）和查询自身共用桶 0",
    "distances 0 .. max_exact - 1 get a bucket each":
        "距离 0 .. max_exact - 1 每个单独一个桶",
    "max_exact .. max_distance share the other buckets on a log scale; anything farther, the last bucket":
        "max_exact .. max_distance 按对数尺度分享其余的桶；更远的都归最后一个桶",
    "query i sits at absolute position i + T_k - T_q (the last T_q positions), key j at j":
        "查询 i 的绝对位置是 i + T_k - T_q（最后 T_q 个位置），键 j 在位置 j",
    "bucket every offset, look its bias up per head":
        "把每个相对偏移分桶，再按头查出它的偏置",
    "prefix sums over the positions: S_i = sum_{j <= i} phi(k_j)^T v_j, z_i = sum_{j <= i} phi(k_j)":
        "沿位置求前缀和：S_i = sum_{j <= i} phi(k_j)^T v_j，z_i = sum_{j <= i} phi(k_j)",
    "each query reads its own prefix":
        "每个查询读取自己的前缀",
    "one summary of all keys and values: S = phi(K)^T V, z = phi(K)^T 1":
        "所有键和值的一份汇总：S = phi(K)^T V，z = phi(K)^T 1",
    "every query reads the same summary":
        "每个查询读取同一份汇总",
    "normalise: the weights phi(q_i) . phi(k_j) / sum_j of them sum to 1 over the keys":
        "归一化：权重 phi(q_i) . phi(k_j) 除以它们对 j 的和，在所有键上加起来为 1",
    "queries: a position-free part and a RoPE part per head":
        "查询：每个头分成不含位置的部分和 RoPE 部分",
    "the cache: the latent and the rotated RoPE key of every position, appended on the time axis":
        "缓存：每个位置的潜在向量和旋转后的 RoPE 键，沿时间轴追加",
    "keys and values per head, rebuilt from the latent; the RoPE key is shared by every head":
        "每个头的键和值从潜在向量重建；RoPE 键由所有头共享",
    "causal attention with the offset T_past, scaled over the whole query head":
        "带偏移 T_past 的因果注意力，按整个查询头的维度缩放",
    "draft: g proposals, each on seq + the proposals before it":
        "草稿：g 个提议，每个都基于 seq 加上它之前的提议",
    "verify: one target call scores all g drafts; its last g + 1 positions are its own choices":
        "验证：一次目标模型调用给全部 g 个草稿打分；它最后 g + 1 个位置是它自己的选择",
    "accept the leading drafts that match, then the target's own token (correction or bonus)":
        "接受开头一致的草稿，再加上目标模型自己的 token（纠正或奖励 token）",
    "stop right after EOS":
        "遇到 EOS 后立即停止",
    "subtract each slice's own max: softmax does not change, and the largest exponent is exp(0) = 1":
        "每个切片先减去自己的最大值：softmax 不变，最大的指数是 exp(0) = 1",
    "normalise along the same axis":
        "沿同一个轴归一化",
    "(B, T) token ids -> (B, 1, 1, T) bool, True at real tokens.":
        "(B, T) 的 token id -> (B, 1, 1, T) 的 bool，真实 token 处为 True。",
    "(T, T) bool, True on and below the diagonal: query i sees keys 0..i.":
        "(T, T) 的 bool，对角线及其下方为 True：查询 i 看得到键 0..i。",
    "similarity of every query with every key; swap only the LAST two axes of k, whatever its rank.":
        "每个查询和每个键的相似度；只交换 k 的最后两个轴，不管它有几维。",
    "hidden keys get -inf, so softmax gives them exactly zero weight":
        "被遮挡的键设为 -inf，softmax 给它们的权重正好是 0",
    "normalise over the keys (the last axis); a row of only -inf gives NaN (-inf - -inf): make it zero":
        "在键上（最后一个轴）归一化；全是 -inf 的一行会得到 NaN（-inf - -inf）：把它置 0",
    "weighted sum of the values":
        "对值做加权求和",
    "every position, and every column's pair index i = j // 2 (columns 2i and 2i+1 share a frequency)":
        "每个位置，以及每一列的配对下标 i = j // 2（第 2i 列和第 2i+1 列共用一个频率）",
    "angle = pos / 10000^(2i / D)":
        "角度 = pos / 10000^(2i / D)",
    "sin on even columns, cos on odd ones (an odd D simply has one more even column)":
        "偶数列用 sin，奇数列用 cos（D 为奇数时只是多一个偶数列）",
    "a batch axis of size 1, so the table broadcasts over (B, T, D)":
        "加一个大小为 1 的 batch 轴，让这张表在 (B, T, D) 上广播",
    "statistics of every vector; keepdims leaves a trailing axis of 1 so they broadcast back":
        "每个向量的统计量；keepdims 留下一个大小为 1 的末轴，好广播回去",
    "zero mean, unit variance; epsilon inside the square root keeps a constant row finite":
        "零均值、单位方差；epsilon 放在平方根里面，常数行也保持有限",
    "learned scale and shift, broadcast over the leading axes":
        "可学习的缩放和平移，在前面的各个轴上广播",
    "choose the activation before any work, so a wrong name fails fast":
        "先选好激活函数再开始计算，名字写错就立刻报错",
    "expand to d_ff, bias, then the nonlinearity":
        "扩展到 d_ff，加偏置，再过非线性激活",
    "project back to d_model; no activation after the second layer":
        "投影回 d_model；第二层之后不接激活",
    "project, then cut d_model into num_heads heads of size depth":
        "先投影，再把 d_model 切成 num_heads 个大小为 depth 的头",
    "attend in every head at once (the head axis is just one more leading axis)":
        "所有头一起做注意力（头这个轴只是又多了一个前导轴）",
    "concatenate the heads and mix them with W_o":
        "拼接各个头，再用 W_o 混合",
    "residual connection: the sublayer's input is added to its output":
        "残差连接：子层的输入加到它的输出上",
    "layer normalization of the sum, with the default epsilon":
        "对这个和做层归一化，用默认的 epsilon",
    "self-attention: queries, keys and values all come from x; the mask hides PAD keys":
        "自注意力：查询、键、值都来自 x；掩码遮住 PAD 键",
    "residual from the sublayer's input x, then layer norm":
        "残差取自子层的输入 x，然后层归一化",
    "position-wise FFN on out1 (not on x)":
        "逐位置前馈网络作用在 out1 上（不是 x）",
    "residual from the FFN's input out1, then layer norm":
        "残差取自前馈网络的输入 out1，然后层归一化",
    "masked self-attention: position i sees positions <= i of the target only":
        "带掩码的自注意力：位置 i 只看得到目标序列中 <= i 的位置",
    "cross-attention: queries from the decoder (out1), keys and values from the encoder":
        "交叉注意力：查询来自解码器（out1），键和值来自编码器",
    "position-wise FFN on out2, residual from out2":
        "逐位置前馈网络作用在 out2 上，残差取自 out2",
    "self-attention with a residual connection, then norm1":
        "带残差连接的自注意力，然后 norm1",
    "feed-forward on the normalised x, residual, then norm2":
        "在归一化后的 x 上做前馈，加残差，然后 norm2",
    "count every token; a Counter keeps the order in which tokens were first seen":
        "统计每个 token；Counter 记住各个 token 第一次出现的顺序",
    "the special tokens first, then the frequent words, each taking the next free index":
        "先放特殊 token，再放高频词，每个都拿下一个空闲的下标",
    "the inverse mapping":
        "反向映射",
    "tokens (B, T) -> (B, 1, 1, T): True where the key is a real token.":
        "tokens (B, T) -> (B, 1, 1, T)：键是真实 token 的地方为 True。",
    "(1, 1, T, T): query i sees keys 0..i (lower triangle with the diagonal).":
        "(1, 1, T, T)：查询 i 看得到键 0..i（含对角线的下三角）。",
    "tgt (B, T_t) -> (B, 1, T_t, T_t): a key is visible if it is real AND not in the future.":
        "tgt (B, T_t) -> (B, 1, T_t, T_t)：键既是真实 token、又不在未来时才可见。",
    "src (B, T_s), tgt (B, T_t) -> (B, 1, T_t, T_s): every target query sees the real source keys.":
        "src (B, T_s), tgt (B, T_t) -> (B, 1, T_t, T_s)：每个目标查询看得到源序列的真实键。",
    "similarity of every query with every key, scaled so softmax does not saturate":
        "每个查询和每个键的相似度，经过缩放，softmax 才不会饱和",
    "normalise over the keys (the last axis); a row of only -inf gives NaN: make it zero":
        "在键上（最后一个轴）归一化；全是 -inf 的一行会得到 NaN：把它置 0",
    "one angle per (position, column pair); float64 keeps the table exact to float32 rounding":
        "每个（位置，列对）一个角度；用 float64 算，这张表精确到 float32 的舍入",
    "even columns sin, odd columns cos; an odd d_model has one cos column fewer":
        "偶数列 sin，奇数列 cos；d_model 为奇数时 cos 列少一列",
    "a buffer, not a parameter: saved in state_dict, moved by .to(), never trained":
        "是 buffer 不是参数：会存进 state_dict，会随 .to() 移动，从不训练",
    "statistics of each vector over the last axis; subtracting the mean first keeps the variance exact":
        "每个向量在最后一个轴上的统计量；先减均值，方差才算得精确",
    "normalise; eps inside the square root keeps a constant vector finite":
        "归一化；eps 放在平方根里面，常数向量也保持有限",
    "Expands each position to d_ff, applies the activation, projects back to d_model.":
        "把每个位置扩展到 d_ff，过激活函数，再投影回 d_model。",
    "project: queries from x_q, keys and values from x_kv; then split into heads":
        "投影：查询来自 x_q，键和值来自 x_kv；然后拆成多个头",
    "attend in every head at once":
        "所有头一起做注意力",
    "concatenate the heads and project back to d_model":
        "拼接各个头，投影回 d_model",
    "A residual connection around `sublayer` with a LayerNorm after the sum (post-LN) or before the sublayer (pre-LN).":
        "`sublayer` 外面包一层残差连接，LayerNorm 放在求和之后（post-LN）或子层之前（pre-LN）。",
    "self-attention: queries, keys and values all come from x":
        "自注意力：查询、键、值都来自 x",
    "residual + LayerNorm (post-LN: normalize the sum)":
        "残差 + LayerNorm（post-LN：对和做归一化）",
    "position-wise FFN on the normalized x, residual from that same x, LayerNorm":
        "逐位置前馈网络作用在归一化后的 x 上，残差取自同一个 x，再 LayerNorm",
    "masked self-attention: Q = K = V = y, position i sees only the target keys tgt_mask allows":
        "带掩码的自注意力：Q = K = V = y，位置 i 只看得到 tgt_mask 允许的目标键",
    "cross-attention: Q from the decoder, K and V from the encoder memory":
        "交叉注意力：Q 来自解码器，K 和 V 来自编码器的 memory",
    "position-wise feed-forward network":
        "逐位置前馈网络",
    "project and split into heads: (B, T, D) -> (B, T, H, d_k) -> (B, H, T, d_k)":
        "投影并拆成多个头：(B, T, D) -> (B, T, H, d_k) -> (B, H, T, d_k)",
    "scaled scores; hidden keys get -inf, and rows that see nothing get zero weights":
        "缩放后的分数；被遮挡的键设为 -inf，什么都看不到的行权重为 0",
    "combine the heads and project: (B, H, T, d_k) -> (B, T, H, d_k) -> (B, T, D)":
        "合并各个头再投影：(B, H, T, d_k) -> (B, T, H, d_k) -> (B, T, D)",
    "the causal mask, always; with padding, AND the real-token keys":
        "因果掩码总是要加；有填充时，再和真实 token 的键做 AND",
    "attention sublayer, then feed-forward sublayer":
        "注意力子层，然后前馈子层",
    "N deep copies: each layer gets its own weights":
        "N 份深拷贝：每一层都有自己的权重",
    "a final LayerNorm of the layers' width":
        "最后一个 LayerNorm，宽度和各层一样",
    "mask: every query sees the real (non-PAD) source keys":
        "掩码：每个查询都看得到源序列中真实（非 PAD）的键",
    "embed, add positions, run the layers one after the other":
        "嵌入，加上位置编码，逐层运行",
    "masks: target keys that are real and not in the future; real source keys":
        "掩码：目标键要真实且不在未来；源键要真实",
    "embed, add positions, run the layers; each cross-attends to the encoder's output":
        "嵌入，加上位置编码，逐层运行；每一层都对编码器的输出做交叉注意力",
    "inference: dropout off; encode the source once":
        "推理：关掉 dropout；源序列只编码一次",
    "decode the whole prefix; the next token comes from its last position":
        "解码整个前缀；下一个 token 取自它的最后一个位置",
    "finished sequences get PAD; append; a new EOS finishes its sequence":
        "已结束的序列补 PAD；追加；新出现的 EOS 结束它所在的序列",
    "stop as soon as every sequence is finished":
        "所有序列都结束就立刻停止",
    "the tokens to copy, drawn with the caller's generator (ids 0, 1, 2 are special)":
        "要复制的 token，用调用者给的生成器抽取（id 0、1、2 是特殊 token）",
    "decoder input starts with BOS; the target is the same sequence shifted left, ending in EOS":
        "解码器输入以 BOS 开头；目标是同一序列左移一位，以 EOS 结尾",
    "forward in training mode: logits for every target position":
        "训练模式下前向：每个目标位置的 logits",
    "cross-entropy over the vocabulary, averaged over the non-PAD targets":
        "在词表上算交叉熵，对非 PAD 的目标取平均",
    "fresh gradients, backward, update":
        "清空梯度，反向传播，更新参数",
    "at least float32: x² overflows float16 above 256 (float64 stays float64)":
        "至少用 float32：x² 在 float16 里超过 256 就溢出（float64 保持 float64）",
    "mean square over the last axis; eps inside the root keeps an all-zero vector at 0":
        "在最后一个轴上求均方；eps 放在根号里面，全零向量仍然得 0",
    "back to x's dtype, then the learned scale broadcast over the leading axes":
        "转回 x 的 dtype，再乘上可学习的缩放，在前面的各个轴上广播",
    "the gate: SiLU of one projection, (..., D) @ (D, d_ff) -> (..., d_ff)":
        "门控：一个投影的 SiLU，(..., D) @ (D, d_ff) -> (..., d_ff)",
    "gate the linear branch elementwise, (..., d_ff) * (..., d_ff)":
        "用门控逐元素乘线性分支，(..., d_ff) * (..., d_ff)",
    "project back, (..., d_ff) @ (d_ff, D) -> (..., D)":
        "投影回去，(..., d_ff) @ (d_ff, D) -> (..., D)",
    "one frequency per pair: theta_i = base^(-2i/d_k), i = 0 .. d_k/2 - 1":
        "每一对一个频率：theta_i = base^(-2i/d_k)，i = 0 .. d_k/2 - 1",
    "the angle of every (position, pair)":
        "每个（位置，对）的角度",
    "the two coordinates of every pair":
        "每一对的两个坐标",
    "rotate: (a, b) -> (a cos - b sin, a sin + b cos)":
        "旋转：(a, b) -> (a cos - b sin, a sin + b cos)",
    "project, split into H query heads and H_kv key/value heads":
        "投影，拆成 H 个查询头和 H_kv 个键/值头",
    "share: kv head g serves query heads g*G .. g*G+G-1 (repeat_interleave, not repeat)":
        "共享：第 g 个 kv 头服务查询头 g*G .. g*G+G-1（用 repeat_interleave，不是 repeat）",
    "attend in every query head at once":
        "所有查询头一起做注意力",
    "project the new positions only":
        "只投影新的位置",
    "append to the cache on the time axis (torch.cat makes new tensors: the caller's stay intact)":
        "在时间轴上追加到缓存（torch.cat 生成新张量：调用者的张量保持不变）",
    "causal mask offset by T_past: new query i sees keys 0 .. T_past + i":
        "因果掩码偏移 T_past：新查询 i 看得到键 0 .. T_past + i",
    "combine the heads and project":
        "合并各个头再投影",
    "every query against every key, scaled (k.mT: k with its last two axes swapped)":
        "每个查询对每个键，经过缩放（k.mT：交换了最后两个轴的 k）",
    "hide the future and everything older than the window (the diagonal stays: no empty row)":
        "遮住未来以及比窗口更早的一切（对角线保留：不会有空行）",
    "normalise over the keys and average the values":
        "在键上归一化，再对值做加权平均",
    "the n slopes of n heads: 2^(-8/n), 2^(-16/n), ..., 2^-8":
        "n 个头的 n 个斜率：2^(-8/n), 2^(-16/n), ..., 2^-8",
    "the first H - n even-indexed slopes of 2n heads, 2^(-8(h+1)/(2n)) for h = 0, 2, 4, ...: odd exponents":
        "2n 个头的斜率中下标为偶数的前 H - n 个，2^(-8(h+1)/(2n))，h = 0, 2, 4, ...：奇数指数",
    "scaled scores plus the per-head linear bias (the bias is not scaled; k.mT swaps k's last two axes)":
        "缩放后的分数加上每个头的线性偏置（偏置不缩放；k.mT 交换 k 的最后两个轴）",
    "causal with the offset: query i (absolute position i + T_k - T_q) sees keys j <= i + T_k - T_q":
        "带偏移的因果掩码：查询 i（绝对位置 i + T_k - T_q）看得到 j <= i + T_k - T_q 的键",
    "running statistics per query: max m, sum l of exp(score - m), accumulator of exp(score - m) v":
        "每个查询的运行统计量：最大值 m，exp(score - m) 的和 l，exp(score - m) v 的累加器",
    "the scores of this tile only":
        "只算这个分块的分数",
    "new running max; a query that has seen no key yet keeps -inf, shifted by 0 instead":
        "新的运行最大值；还没见过任何键的查询保持 -inf，改为平移 0",
    "rescale the old sum and accumulator, add this tile":
        "重新缩放旧的和与累加器，再加上这个分块",
    "normalise once at the end; a query with no visible key has l = 0 and acc = 0: output 0":
        "最后只归一化一次；没有可见键的查询 l = 0、acc = 0：输出 0",
    "stable log-probabilities over the class axis: x - logsumexp(x) never overflows":
        "在类别轴上求稳定的对数概率：x - logsumexp(x) 永远不会溢出",
    "the positions that count; ignored ones read class 0 (any valid index) and are masked below":
        "计入的位置；被忽略的位置读类别 0（任何合法下标都行），下面再用掩码去掉",
    "mean over the kept positions: 0 / 0 = NaN when every position is ignored":
        "对保留的位置求平均：所有位置都被忽略时 0 / 0 = NaN",
    "linear warm-up (step · warmup^-1.5) until the two branches meet at step == warmup, 2) then 1/√step":
        "线性预热（step · warmup^-1.5），直到两支在 step == warmup 处相交，2) 之后按 1/√step",
    "temperature: T < 1 sharpens the distribution, T > 1 flattens it":
        "温度：T < 1 让分布更尖锐，T > 1 让分布更平坦",
    "top-k: keep every token at least as large as the k-th largest":
        "top-k：保留所有不小于第 k 大的 token",
    "top-p on the distribution top-k left: drop a token once the more probable ones reach top_p":
        "在 top-k 留下的分布上做 top-p：更可能的那些 token 的概率和一达到 top_p，就丢掉这个 token",
    "temperature 0: greedy, no randomness":
        "温度为 0：贪心，没有随机性",
    "the filtered distribution, then one draw per row from the caller's generator":
        "过滤后的分布，再用调用者的生成器每行抽一次",
    "one live hypothesis, BOS alone, score 0":
        "一个活着的假设：只有 BOS，得分 0",
    "extend every live hypothesis by every token":
        "把每个活着的假设用每个 token 扩展一步",
    "keep the beam_size best extensions overall":
        "在所有扩展里保留最好的 beam_size 个",
    "an extension ending in EOS is finished; the others stay live":
        "以 EOS 结尾的扩展算完成；其余的继续活着",
    "after max_new_tokens steps the live hypotheses count as finished":
        "max_new_tokens 步之后，活着的假设也算完成",
    "rank by score / len ** length_penalty (len: generated tokens, EOS included, BOS not)":
        "按 score / len ** length_penalty 排序（len：生成的 token 数，算 EOS，不算 BOS）",
    "dx: each row of x reaches y through W, so its gradient goes back through W^T":
        "dx：x 的每一行经过 W 到达 y，所以它的梯度经过 W^T 传回来",
    "flatten every leading axis into N rows: every row used the same W and b":
        "把所有前导轴展平成 N 行：每一行用的是同一个 W 和 b",
    "dW and db sum the rows' contributions":
        "dW 和 db 对各行的贡献求和",
    "the Jacobian is diag(y) - y y^T; applied to dy, its y y^T part needs one number per slice:":
        "雅可比矩阵是 diag(y) - y y^T；作用在 dy 上时，y y^T 部分每个切片只需要一个数：",
    "the diag(y) part minus that: dx_i = y_i dy_i - y_i <dy, y>":
        "diag(y) 部分减去它：dx_i = y_i dy_i - y_i <dy, y>",
    "recompute the forward pass's statistics (two passes: subtract the mean before squaring)":
        "重新计算前向的统计量（两遍：先减均值再平方）",
    "gamma and beta are shared by every vector: sum over all the leading axes":
        "gamma 和 beta 被每个向量共享：在所有前导轴上求和",
    "through x_hat: the mean and the variance depend on every entry of the row":
        "经过 x_hat：均值和方差依赖这一行的每一个元素",
    "recompute the forward weights P; a row with no visible key is 0 (not NaN)":
        "重新计算前向的权重 P；没有可见键的行为 0（不是 NaN）",
    "out = P v: the gradient flows to v through Pᵀ and to P through vᵀ":
        "out = P v：梯度经 Pᵀ 流向 v，经 vᵀ 流向 P",
    "softmax's Jacobian (diag(P) − P Pᵀ per row) applied to dP; hidden keys have P = 0, so dS = 0 there":
        "softmax 的雅可比矩阵（每行 diag(P) − P Pᵀ）作用在 dP 上；被遮挡的键 P = 0，所以那里 dS = 0",
    "S = q kᵀ · scale":
        "由 S = q kᵀ · scale 传回 q 和 k",
    "log-ratios of policy to reference for each response, summed over its response tokens":
        "每个回答上策略相对参考模型的对数比，在它的回答 token 上求和",
    "the margin: how much more than the reference the policy prefers y_c to y_r":
        "差值：策略比参考模型更偏好 y_c 而不是 y_r 的程度",
    "-log σ(β z), stably (log(sigmoid) is -inf below z ≈ -745), averaged over the pairs":
        "稳定地计算 -log σ(β z)（z ≈ -745 以下 log(sigmoid) 会变成 -inf），再对所有偏好对取平均",
    "the implicit rewards, for logging only":
        "隐式奖励，只用于记录日志",
    "PPO's clipped surrogate on the probability ratio π_θ / π_θ_old":
        "在概率比 π_θ / π_θ_old 上做 PPO 的截断代理目标",
    "the k3 estimator of KL(π_θ ‖ π_ref): unbiased and never negative":
        "KL(π_θ ‖ π_ref) 的 k3 估计：无偏，且永远不为负",
    "mean over each completion's own tokens, then over the completions":
        "先在每个回答自己的 token 上求平均，再在所有回答上求平均",
    "route: softmax over the experts, keep the top k, renormalise their weights to sum to 1":
        "路由：在专家上做 softmax，保留前 k 个，把它们的权重重新归一化到和为 1",
    "dispatch: each expert runs on the tokens routed to it, and only those":
        "分发：每个专家只处理路由给它的 token",
    "Switch's load-balancing loss: E · Σ_i (share of tokens sent to i) · (mean router probability of i)":
        "Switch 的负载均衡损失：E · Σ_i（发给 i 的 token 比例）·（i 的平均路由概率）",
})


# ----------------------------------------------------------------------------- drawing

_INLINE = re.compile(r"(`[^`]+`|\*\*[^*]+\*\*)")


def inline(line: str, style: str = "") -> Text:
    text = Text(style=style)
    for part in _INLINE.split(line):
        if part.startswith("`") and part.endswith("`") and len(part) > 1:
            text.append(part[1:-1], style="bold cyan")
        elif part.startswith("**") and part.endswith("**") and len(part) > 3:
            text.append(part[2:-2], style="bold")
        else:
            text.append(part)
    return text


def _table(rows: list[str]):
    from rich.table import Table  # only a statement with a table pays for it

    cells = [[c.strip() for c in row.strip().strip("|").split("|")] for row in rows]
    body = [r for r in cells[1:] if not all(set(c) <= set("-: ") for c in r)]
    table = Table(show_lines=False)
    for head in cells[0]:
        table.add_column(Wrapped(inline(head)))
    for r in body:
        table.add_row(*(Wrapped(inline(c)) for c in r))
    return table


def _starts_block(line: str) -> bool:
    stripped = line.lstrip()
    return stripped.startswith(("#", "|", "```", "- ")) or bool(re.match(r"\d+\. ", stripped))


def render(markdown: str) -> Group:
    parts: list = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), len(lines))
            parts.append(Padding(Text("\n".join(lines[i + 1:end]), style="cyan"), (0, 0, 0, 4)))
            i = end + 1
        elif line.startswith("    ") and line.strip():
            end = i
            while end < len(lines) and (lines[end].startswith("    ") or not lines[end].strip()):
                end += 1
            block = "\n".join(x[4:] for x in lines[i:end]).rstrip("\n")
            parts += [Padding(Text(block, style="cyan"), (0, 0, 0, 4)), Text("")]
            i = end
        elif line.startswith("|"):
            end = i
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            parts.append(_table(lines[i:end]))
            i = end
        elif line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            title = line.lstrip("#").strip()
            parts.append(inline(title, "bold underline" if level == 1 else "bold magenta"))
            i += 1
        elif not line.strip():
            parts.append(Text(""))
            i += 1
        else:  # a paragraph or a list item, with its continuation lines
            end = i + 1
            while end < len(lines) and lines[end].strip() and not _starts_block(lines[end]):
                end += 1
            joined = " ".join([line.rstrip()] + [x.strip() for x in lines[i + 1:end]])
            indent = len(joined) - len(joined.lstrip())
            bullet = re.match(r"(\s*)(- |\d+\. )", joined)
            if bullet:
                marker = "• " if bullet.group(2) == "- " else bullet.group(2)
                parts.append(Hanging(" " * indent + marker, inline(joined[bullet.end():])))
            else:
                parts.append(Wrapped(inline(joined)))
            i = end
    return Group(*parts)
