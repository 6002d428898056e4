"""The caller's world around one call (checker.sandbox.world): the tensors and arrays a call is handed, as arguments or
in a list or tuple that is one, are the caller's; a write into any of them is a change, said with where it is."""

import numpy as np
import torch

from checker.sandbox.world import World, world_key


def _inputs_changed(call, *args) -> list[tuple]:
    watch = World(rng=False, args=args)
    call(*args)
    return [(c["owner"], c["name"]) for c in watch.changes() if c["kind"] == "inputs"]


def test_a_write_into_a_tensor_an_array_or_a_lists_item_is_a_change_and_where_it_is():
    x, lses, a = torch.randn(3, 4), [torch.randn(2), torch.randn(2)], np.ones(3)
    assert _inputs_changed(lambda x, lses, a: x.mul_(2), x, lses, a) == [(1, "")]
    assert _inputs_changed(lambda x, lses, a: lses[1].sub_(1), x, lses, a) == [(2, "1")]
    assert _inputs_changed(lambda x, lses, a: a.__setitem__(0, 5.0), x, lses, a) == [(3, "")]


def test_reading_copying_and_nan_left_as_it_was_are_no_change():
    x = torch.tensor([1.0, float("nan"), -float("inf")])
    assert _inputs_changed(lambda x, n: (x * 2, x.clone().zero_(), n + 1), x, 3) == []
    assert _inputs_changed(lambda x: x.view(3)[:0].zero_(), x) == []  # an empty slice writes nothing


def test_a_write_of_the_same_values_or_a_dtype_kept_counts_only_when_values_change():
    x = torch.arange(4.0)
    assert _inputs_changed(lambda x: x.copy_(x.clone()), x) == []
    assert _inputs_changed(lambda x: x.masked_fill_(x > 2, 0.0), x) == [(1, "")]


def test_one_functions_argument_is_not_anothers():
    change = {"kind": "inputs", "owner": 1, "name": ""}
    assert world_key(change, "append") != world_key(change, "gather")
    assert world_key({"kind": "grad", "owner": None}, "append") == world_key({"kind": "grad", "owner": None}, "gather")


def test_an_item_of_a_handed_list_replaced_added_or_taken_out_is_a_change():
    """lses[i] = lses[i] - m leaves every tensor as it was and the caller's list holding others: a change too."""
    def shift(lses):
        for i in range(len(lses)):
            lses[i] = lses[i] - 1

    def changed(call, *args):
        world = World(rng=False, args=args)
        call(*args)
        return [(c["kind"], c["owner"], c["name"]) for c in world.changes() if c["kind"] in ("inputs", "list")]

    assert changed(shift, [torch.randn(2), torch.randn(2)]) == [("list", 1, "0")]
    assert changed(lambda lses: lses.append(torch.zeros(2)), [torch.randn(2)]) == [("list", 1, "")]
    assert changed(lambda lses: lses[0].sub_(1), [torch.randn(2)]) == [("inputs", 1, "0")]  # written into, said once
    assert changed(lambda lses: [s - 1 for s in lses], [torch.randn(2)]) == []
