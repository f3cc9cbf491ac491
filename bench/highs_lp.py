#!/usr/bin/env python3
"""HiGHS on one dense LP, for `gpumat-bench --suite lp`: min c'x, A x = b,
x >= 0, read from the binary file gpumat-bench writes (two little-endian
int64 m and n, then A column-major, b and c as float64). Runs HiGHS's
simplex, its interior-point method without crossover and PDLP, each in a
fresh instance with HiGHS's default tolerances, and prints one JSON object:
per solver the wall time of `run()`, the model status and the objective.

    python3 bench/highs_lp.py PROBLEM.bin --threads 16 --time-limit 300
"""

import argparse
import json
import sys
import time

import numpy as np
import highspy


def read(path):
    with open(path, "rb") as f:
        m, n = np.fromfile(f, dtype="<i8", count=2)
        a = np.fromfile(f, dtype="<f8", count=m * n)
        b = np.fromfile(f, dtype="<f8", count=m)
        c = np.fromfile(f, dtype="<f8", count=n)
    if a.size != m * n or b.size != m or c.size != n:
        sys.exit(f"{path}: the file is shorter than its {m} x {n} problem")
    return int(m), int(n), a, b, c


def model(m, n, a, b, c):
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = m
    lp.col_cost_ = c
    lp.col_lower_ = np.zeros(n)
    lp.col_upper_ = np.full(n, highspy.kHighsInf)
    lp.row_lower_ = b
    lp.row_upper_ = b
    # Every entry, zeros included: the matrix is dense.
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.arange(0, m * n + 1, m, dtype=np.int32)
    lp.a_matrix_.index_ = np.tile(np.arange(m, dtype=np.int32), n)
    lp.a_matrix_.value_ = a
    return lp


def run(lp, solver, threads, time_limit):
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("solver", solver)
    h.setOptionValue("threads", threads)
    h.setOptionValue("time_limit", time_limit)
    if solver == "ipm":
        h.setOptionValue("run_crossover", "off")
    h.passModel(lp)
    start = time.perf_counter()
    h.run()
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "status": h.modelStatusToString(h.getModelStatus()),
        "objective": h.getInfo().objective_function_value,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("problem")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--time-limit", type=float, default=300.0)
    p.add_argument("--solvers", default="simplex,ipm,pdlp")
    args = p.parse_args()
    lp = model(*read(args.problem))
    out = {"version": highspy.Highs().version(), "threads": args.threads}
    for solver in args.solvers.split(","):
        out[solver] = run(lp, solver, args.threads, args.time_limit)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
