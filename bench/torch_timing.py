"""GPU timing of a PyTorch call, shared by the PyTorch baselines (pytorch_baseline.py and
pytorch_conv_baseline.py), the way `poolgrad bench` times a variant (bench/timing.hpp).

replay (the default): `reps` calls captured once in a CUDA graph (about 1 ms of GPU time, at most
1000 calls), the graph replayed between two CUDA events; the time per call is the median over
`runs` replays divided by `reps`. Without it a call shorter than the host's cost of issuing it
(the framework's dispatch and the launch, several microseconds) times the host, not the kernel.
batch: CUDA events around each call, the median of `runs` (every report before 2026-12-07).
A call that cannot be captured is timed by batch, and `timed` says so."""
import torch

MAX_REPLAY_CALLS = 1000


def _events_ms(run):
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    start.record()
    run()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop)


def _median(times):
    times = sorted(times)
    return times[len(times) // 2]


def timed(fn, warmup=10, runs=50, replay=True):
    """(ms per call, "replay" | "batch" | "batch (capture failed: why)")."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    eager = _median([_events_ms(fn) for _ in range(runs)])
    if not replay:
        return eager, "batch"
    reps = int(min(max(1.0 / max(eager, 1e-3), 1), MAX_REPLAY_CALLS))
    try:
        # Capture needs the call's lazy initialisation done on a side stream first (PyTorch's
        # torch.cuda.graphs recipe).
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(reps):
                fn()
    except RuntimeError as e:
        torch.cuda.synchronize()
        return eager, f"batch (capture failed: {str(e).splitlines()[0]})"
    graph.replay()
    torch.cuda.synchronize()
    ms = _median([_events_ms(graph.replay) for _ in range(runs)]) / reps
    del graph
    return ms, "replay"


def time_ms(fn, warmup=10, runs=50, replay=True):
    return timed(fn, warmup, runs, replay)[0]
