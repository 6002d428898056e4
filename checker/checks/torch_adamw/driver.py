"""Runs in the child: the user's adamw_step driving one parameter tensor for several steps.

Drivers never judge: they return what the user's code did, the parent compares (see Kit.drive).
The parent runs the same loop with torch's own AdamW update and with its named mistakes.
"""


def adamw_loop(user, param, target, noise, curvature, hyper):
    """Steps t = 1..len(noise) on the loss ½·curvature·‖θ − target‖² (plus fixed noise per step):
    g_t = curvature · (θ − target) + noise[t - 1]. Returns θ after each step, and the final moments."""
    step_fn = user.adamw_step if hasattr(user, "adamw_step") else user
    exp_avg, exp_avg_sq = param * 0, param * 0
    params, moments = [], []
    for t, n in enumerate(noise, start=1):
        grad = curvature * (param - target) + n
        param, exp_avg, exp_avg_sq = step_fn(param, grad, exp_avg, exp_avg_sq, t, hyper["lr"], hyper["betas"],
                                             hyper["eps"], hyper["weight_decay"])
        params.append(param.clone() if hasattr(param, "clone") else param)  # a copy: a later in-place step must not change it
        moments.append(tuple(x.clone() if hasattr(x, "clone") else x for x in (exp_avg, exp_avg_sq)))
    return {"params": params, "exp_avg": exp_avg, "exp_avg_sq": exp_avg_sq, "moments": moments}
