"""The parts of bench/runtime_overhead.py: the workload, the mock process, both variants."""
