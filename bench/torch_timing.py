"""GPU timing of a PyTorch call, shared by the PyTorch baselines (pytorch_baseline.py and
pytorch_conv_baseline.py): CUDA events around each run, the median of `runs` after `warmup`."""
import torch


def time_ms(fn, warmup=10, runs=50):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]
