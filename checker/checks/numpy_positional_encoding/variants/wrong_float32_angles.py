# expect: against the float64 table rounded to float32
"""Seed 000's table with the positions and the rates in float32 from the start: the angles of case 3
(~2000 rad) lose their digits, which the final float32 cast does not excuse."""
import numpy as np


def positional_encoding(position, d_model):
    pos = np.arange(position, dtype=np.float32)[:, np.newaxis]
    i = np.arange(d_model, dtype=np.float32)[np.newaxis, :]
    angle_rads = pos / np.power(np.float32(10000), (2 * (i // 2)) / np.float32(d_model))
    angle_rads[:, 0::2] = np.sin(angle_rads[:, 0::2])
    angle_rads[:, 1::2] = np.cos(angle_rads[:, 1::2])
    return angle_rads[np.newaxis, ...].astype(np.float32)
