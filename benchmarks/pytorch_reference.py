#!/usr/bin/env python3
"""PyTorch reference timings for the SOAP zoo CNNs on one GPU.

    python3 benchmarks/pytorch_reference.py --model alexnet --batch 256 \
        --precision fp32 --iters 20 [--warmup 5] [--train | --train-only]

Builds the torchvision model that `soap-models NAME` mirrors, with random
weights (weights=None: nothing is downloaded), and times it on random inputs:

  alexnet       torchvision alexnet, input Bx3x224x224 (SOAP leaves out the
                adaptive 6x6 average pool, the identity at 224x224, and
                dropout, a no-op in eval mode)
  resnet101     torchvision resnet101 (v1.5), input Bx3x224x224 (SOAP folds
                batch norm into a per-channel scale and shift; here it is
                nn.BatchNorm2d in eval mode, the same affine map)
  inception_v3  torchvision inception_v3 with aux_logits=False,
                transform_input=False, input Bx3x299x299

Forward: eval mode under torch.no_grad() (what a SOAP executable computes:
the entry function once per iteration). --train adds a training step,
--train-only times only that: train mode, forward, cross-entropy loss
against random labels, backward, optimizer.step() of torch.optim.SGD (lr
0.01, --momentum, default 0.9), gradients set to None: the usual PyTorch
training iteration. It is the counterpart of a `soapc --train` executable
(forward, backward of L = sum <cotangent, result> with the cotangents given,
SGD update p - lr * dL/dp, parameters returned), with these differences,
all small next to the convolutions and matrix products forward and
backward: batch norm uses batch statistics here (SOAP folds it into a
per-channel scale and shift), dropout is active here (SOAP has none), the
loss is cross-entropy (a Bx1000 softmax) instead of a given cotangent, and
momentum keeps one more buffer per parameter (--momentum 0: plain SGD, the
same update as SOAP's).

Precision: fp32 = strict IEEE fp32 in cuBLAS and cuDNN (TF32 off, like
soapc without --allow-tf32); tf32 = TF32 tensor cores allowed (soapc
--allow-tf32). torch.backends.cudnn.benchmark is on.

Timing: --warmup untimed iterations, then --iters timed ones. Each timed
iteration is bracketed by torch.cuda.synchronize() and a host clock, like
the per-iteration wall time a SOAP executable prints; CUDA events give the
device time of the same iterations. The median of each is reported.

Output: one JSON line per (model, batch, precision, mode) on stdout,
prefixed "RESULT " so that scripts can grep it, e.g.
  RESULT {"model": "alexnet", "batch": 256, "precision": "fp32",
          "mode": "forward", "median_ms": 12.3, "event_median_ms": 12.1, ...}
A failure (e.g. out of memory) gives a line with "error" and exit status 1
after the remaining configurations have run. --model, --batch and
--precision take comma-separated lists (every model with its own batch, or
one batch for all) so that one process (one torch import, one CUDA context)
can time everything.
"""

import argparse
import json
import statistics
import sys
import time

MODELS = {
    # name: (input height = width, default batch)
    "alexnet": (224, 256),
    "resnet101": (224, 64),
    "inception_v3": (299, 64),
}


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Time torchvision alexnet / resnet101 / inception_v3 "
        "(the SOAP zoo CNNs) on one GPU.")
    p.add_argument("--model", default="alexnet",
                   help="comma-separated: " + ", ".join(MODELS))
    p.add_argument("--batch", default="",
                   help="comma-separated batch per model, or one for all "
                   "(default: alexnet 256, the others 64)")
    p.add_argument("--precision", default="fp32",
                   help="fp32 (strict), tf32, or both: fp32,tf32")
    p.add_argument("--iters", type=int, default=20,
                   help="timed iterations (default 20)")
    p.add_argument("--warmup", type=int, default=5,
                   help="untimed iterations first (default 5)")
    p.add_argument("--train", action="store_true",
                   help="also time a training step (forward, backward, SGD)")
    p.add_argument("--train-only", action="store_true",
                   help="time only the training step")
    p.add_argument("--momentum", type=float, default=0.9,
                   help="SGD momentum of the training step (default 0.9; "
                   "0: plain SGD, like soapc --train)")
    p.add_argument("--device", default="cuda",
                   help="default cuda; cpu for a dry run without a GPU")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    args.models = [m.strip() for m in args.model.split(",") if m.strip()]
    for m in args.models:
        if m not in MODELS:
            p.error("unknown model '%s' (expected %s)" % (m, ", ".join(MODELS)))
    if args.batch:
        batches = [int(b) for b in args.batch.split(",")]
        if len(batches) == 1:
            batches = batches * len(args.models)
        if len(batches) != len(args.models):
            p.error("--batch needs one value or one per model")
    else:
        batches = [MODELS[m][1] for m in args.models]
    args.batches = batches
    args.precisions = [x.strip() for x in args.precision.split(",") if x.strip()]
    for x in args.precisions:
        if x not in ("fp32", "tf32"):
            p.error("unknown precision '%s' (expected fp32 or tf32)" % x)
    if args.iters < 1 or args.warmup < 0:
        p.error("--iters must be positive and --warmup not negative")
    if args.momentum < 0:
        p.error("--momentum must not be negative")
    return args


def has_attr(obj, name):
    # torch.backends.cuda.matmul raises AssertionError, not AttributeError,
    # for an unknown attribute in old releases: hasattr() would not catch it.
    try:
        getattr(obj, name)
        return True
    except Exception:
        return False


def set_precision(torch, precision):
    """Strict fp32 or TF32 in cuBLAS and cuDNN; returns the settings."""
    tf32 = precision == "tf32"
    matmul = torch.backends.cuda.matmul
    conv = getattr(torch.backends.cudnn, "conv", None)
    if has_attr(matmul, "fp32_precision") and conv is not None and \
            has_attr(conv, "fp32_precision"):
        # PyTorch >= 2.9: the new API (the old flags are deprecated and
        # must not be mixed with it).
        mode = "tf32" if tf32 else "ieee"
        matmul.fp32_precision = mode
        conv.fp32_precision = mode
        return {"matmul": matmul.fp32_precision,
                "cudnn_conv": conv.fp32_precision}
    matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    return {"matmul.allow_tf32": matmul.allow_tf32,
            "cudnn.allow_tf32": torch.backends.cudnn.allow_tf32}


def build_model(torchvision, name):
    models = torchvision.models
    if name == "alexnet":
        return models.alexnet(weights=None)
    if name == "resnet101":
        return models.resnet101(weights=None)
    if name == "inception_v3":
        # init_weights=False: skip the slow truncated-normal initialization
        # (the values do not matter for timing).
        return models.inception_v3(weights=None, aux_logits=False,
                                   transform_input=False, init_weights=False)
    raise ValueError(name)


def time_loop(torch, step, warmup, iters, cuda):
    """Runs step() warmup + iters times; per timed iteration the host wall
    time (synchronized before and after) and the CUDA event time, in ms."""
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    for _ in range(warmup):
        step()
    sync()
    if cuda:  # the peak of the timed iterations (as SOAP's executables say)
        torch.cuda.reset_peak_memory_stats()
    wall, events = [], []
    for _ in range(iters):
        if cuda:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
        sync()
        t0 = time.perf_counter()
        if cuda:
            start.record()
        step()
        if cuda:
            end.record()
        sync()
        wall.append((time.perf_counter() - t0) * 1e3)
        if cuda:
            events.append(start.elapsed_time(end))
    return wall, events


def run_one(torch, torchvision, args, name, batch, precision, mode):
    device = torch.device(args.device)
    cuda = device.type == "cuda"
    settings = set_precision(torch, precision)
    torch.manual_seed(args.seed)
    size = MODELS[name][0]
    model = build_model(torchvision, name).to(device)
    x = torch.randn(batch, 3, size, size, device=device)
    if cuda:
        torch.cuda.reset_peak_memory_stats(device)
    if mode == "forward":
        model.eval()

        def step():
            with torch.no_grad():
                model(x)
    else:
        model.train()
        target = torch.randint(0, 1000, (batch,), device=device)
        opt = torch.optim.SGD(model.parameters(), lr=0.01,
                              momentum=args.momentum)
        loss_fn = torch.nn.CrossEntropyLoss()

        def step():
            out = model(x)
            loss = loss_fn(out, target)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    t0 = time.perf_counter()
    wall, events = time_loop(torch, step, args.warmup, args.iters, cuda)
    total = time.perf_counter() - t0
    result = {
        "model": name, "batch": batch, "precision": precision, "mode": mode,
        "median_ms": round(statistics.median(wall), 4),
        "min_ms": round(min(wall), 4),
        "event_median_ms": round(statistics.median(events), 4) if events else None,
        "iters": args.iters, "warmup": args.warmup,
        "peak_mem_mib": round(torch.cuda.max_memory_allocated(device) / 2**20, 1)
        if cuda else None,
        "input_shape": [batch, 3, size, size],
        "settings": settings, "seconds": round(total, 2),
    }
    if mode == "train":
        result["optimizer"] = "SGD(lr=0.01, momentum=%g)" % args.momentum
    del model, x
    if cuda:
        torch.cuda.empty_cache()
    return result


def main(argv):
    args = parse_args(argv)
    try:
        import torch
        import torchvision
    except ImportError as e:
        print("RESULT " + json.dumps({"error": "cannot import torch/torchvision: %s" % e}))
        return 1
    cuda = torch.device(args.device).type == "cuda"
    if cuda and not torch.cuda.is_available():
        print("RESULT " + json.dumps({"error": "no CUDA device visible to PyTorch"}))
        return 1
    torch.backends.cudnn.benchmark = True
    info = {
        "torch": torch.__version__, "torchvision": torchvision.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "gpu": torch.cuda.get_device_name(torch.device(args.device)) if cuda
        else "CPU (--device %s)" % args.device,
    }
    try:
        info["nccl"] = ".".join(str(v) for v in torch.cuda.nccl.version())
    except Exception:  # NCCL is optional here
        pass
    print("INFO " + json.dumps(info), flush=True)
    modes = ["train"] if args.train_only else \
        (["forward", "train"] if args.train else ["forward"])
    status = 0
    for name, batch in zip(args.models, args.batches):
        for precision in args.precisions:
            for mode in modes:
                try:
                    result = run_one(torch, torchvision, args, name, batch,
                                     precision, mode)
                except Exception as e:  # e.g. torch.OutOfMemoryError
                    status = 1
                    result = {"model": name, "batch": batch,
                              "precision": precision, "mode": mode,
                              "error": "%s: %s" % (type(e).__name__,
                                                   str(e).splitlines()[0] if str(e) else "")}
                    if cuda:
                        torch.cuda.empty_cache()
                print("RESULT " + json.dumps(result), flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
