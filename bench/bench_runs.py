"""The runs of a Google Benchmark report as poolgrad's benches name them ("VARIANT/ROW..."),
shared by report.py (pool_bench) and conv_report.py (conv_bench): aggregates are skipped, a run
that errored is listed apart."""


def runs(bench):
    """Yields (variant, row, benchmark) for each timed run; returns nothing for errors."""
    for b in bench["benchmarks"]:
        if b.get("run_type") == "aggregate" or b.get("error_occurred"):
            continue
        variant, row = b["name"].split("/manual_time")[0].split("/", 1)
        yield variant, row, b


def errors(bench):
    """(name, message) of each run that errored."""
    return [(b["name"].split("/manual_time")[0], b.get("error_message", ""))
            for b in bench["benchmarks"] if b.get("run_type") != "aggregate" and b.get("error_occurred")]
