#!/usr/bin/env python3
"""Generates torch_fixture.json for optim's TestTorchFixture.

Runs PyTorch's Adam, AdamW and SGD (momentum, dampening, Nesterov) and a
LARS following MoCo v3's moco/optimizer.py on fixed small float32 tensors
for 5 steps, with a learning rate that changes at every step (as a schedule
sets it), and records the parameters after each step.

The parameter "w" is 2-D and gets weight decay (and LARS's adaptation);
"b" is 1-D and is the NoDecay parameter: it is put in a param group with
weight_decay 0 for Adam/AdamW/SGD, and LARS excludes 1-D parameters itself.

Run with Debian's python3-torch:  /usr/bin/python3 gen_torch.py
"""
import json
import os

import torch


class MoCoV3LARS(torch.optim.Optimizer):
    """LARS as in MoCo v3 (facebookresearch/moco-v3, moco/optimizer.py):
    no weight decay and no rate scaling for parameters of one dimension
    (biases, normalisation scale/shift)."""

    def __init__(self, params, lr=0, weight_decay=0, momentum=0.9,
                 nesterov=False, trust_coefficient=0.001):
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay,
                                      momentum=momentum, nesterov=nesterov,
                                      trust_coefficient=trust_coefficient))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                update = p.grad
                if p.ndim > 1:
                    update = update.add(p, alpha=group["weight_decay"])
                    pn, un = torch.norm(p), torch.norm(update)
                    one = torch.ones_like(pn)
                    ratio = torch.where(
                        pn > 0.,
                        torch.where(un > 0, group["trust_coefficient"] * pn / un, one),
                        one)
                    update = update.mul(ratio)
                state = self.state[p]
                if "mu" not in state:
                    state["mu"] = torch.zeros_like(p)
                mu = state["mu"]
                mu.mul_(group["momentum"]).add_(update)
                if group["nesterov"]:
                    update = update.add(mu, alpha=group["momentum"])
                else:
                    update = mu
                p.add_(update, alpha=-group["lr"])


STEPS = 5
gen = torch.Generator().manual_seed(20240607)
INIT = {
    "w": torch.randn(3, 4, generator=gen, dtype=torch.float32),
    "b": torch.randn(4, generator=gen, dtype=torch.float32) * 0.1,
}
GRADS = [
    {name: torch.randn(t.shape, generator=gen, dtype=torch.float32) * scale
     for name, t in INIT.items()}
    for scale in [1.0, 0.5, 2.0, 0.1, 1.0][:STEPS]
]
LR_FACTORS = [1.0, 0.8, 1.2, 0.5, 0.3][:STEPS]

CASES = [
    # name, kind, base lr, hyperparameters
    ("adam", "adam", 0.01, dict()),
    ("adam_wd", "adam", 0.01, dict(weight_decay=0.05, betas=(0.85, 0.99), eps=1e-6)),
    ("adamw", "adamw", 0.01, dict(weight_decay=0.1)),
    ("sgd", "sgd", 0.1, dict()),
    ("sgd_momentum_wd", "sgd", 0.1, dict(momentum=0.9, weight_decay=1e-2)),
    ("sgd_dampening", "sgd", 0.1, dict(momentum=0.9, dampening=0.2)),
    ("sgd_nesterov", "sgd", 0.1, dict(momentum=0.9, nesterov=True, weight_decay=1e-2)),
    ("lars", "lars", 0.5, dict(weight_decay=0.1, trust_coefficient=0.02)),
    ("lars_mocov3_defaults", "lars", 2.0, dict(weight_decay=1e-6)),
    ("lars_nesterov", "lars", 0.5, dict(weight_decay=1e-2, trust_coefficient=0.02, nesterov=True)),
]


def run(kind, lr, hp):
    w = INIT["w"].clone().requires_grad_(True)
    b = INIT["b"].clone().requires_grad_(True)
    wd = hp.get("weight_decay", 0.0)
    if kind == "lars":
        opt = MoCoV3LARS([w, b], lr=lr, **hp)
    else:
        cls = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW, "sgd": torch.optim.SGD}[kind]
        rest = {k: v for k, v in hp.items() if k != "weight_decay"}
        opt = cls([{"params": [w], "weight_decay": wd},
                   {"params": [b], "weight_decay": 0.0}], lr=lr, **rest)
    after = []
    for step in range(STEPS):
        for group in opt.param_groups:
            group["lr"] = lr * LR_FACTORS[step]
        w.grad = GRADS[step]["w"].clone()
        b.grad = GRADS[step]["b"].clone()
        opt.step()
        after.append({"w": w.detach().flatten().tolist(), "b": b.detach().flatten().tolist()})
    return after


def main():
    out = {
        "generator": "gen_torch.py with torch " + torch.__version__,
        "params": [{"name": n, "shape": list(t.shape), "no_decay": t.ndim == 1,
                    "init": t.flatten().tolist()} for n, t in INIT.items()],
        "grads": [{n: g.flatten().tolist() for n, g in step.items()} for step in GRADS],
        "cases": [],
    }
    for name, kind, lr, hp in CASES:
        case = {"name": name, "kind": kind,
                "lrs": [lr * f for f in LR_FACTORS],
                "weight_decay": hp.get("weight_decay", 0.0),
                "momentum": hp.get("momentum", 0.9 if kind == "lars" else 0.0),
                "dampening": hp.get("dampening", 0.0),
                "nesterov": hp.get("nesterov", False),
                "beta1": hp.get("betas", (0.9, 0.999))[0],
                "beta2": hp.get("betas", (0.9, 0.999))[1],
                "eps": hp.get("eps", 1e-8),
                "trust_coefficient": hp.get("trust_coefficient", 0.001),
                "after": run(kind, lr, hp)}
        out["cases"].append(case)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_fixture.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
