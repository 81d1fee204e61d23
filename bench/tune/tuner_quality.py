"""The comparison tuners on Branin and Hartmann-6 at equal budgets, in the benchmark's venv
(bench/tune/run_tuner_quality.sh creates it: scikit-optimize and Optuna from PyPI).

  skopt   the ANL study's tuner as ytopt configures it: scikit-optimize's Optimizer with
          base_estimator="RF", acq_func="gp_hedge", acq_optimizer="sampling",
          n_initial_points=10; IN_FLIGHT points in flight as ytopt runs under libEnsemble with
          async_return: a first batch ask(n_points=IN_FLIGHT, strategy="cl_max"), then on each
          completion tell() and ask() one point
  optuna  Optuna's TPESampler (its default sampler) with constant_liar=True, ask/tell
  random  uniform random search (NumPy)

The oldest point in flight completes first (as in wavekit's tune_tuner_quality), so runs are
reproducible. Prints the same CSV: function,tuner,seed,best_at_64,best_at_128.

usage: python tuner_quality.py [seeds=20] [budget=128] [in_flight=4] [tuners=skopt,optuna]
                               [functions=branin,hartmann6]
  seeds: a count N (seeds 1..N) or a list of seeds and ranges ("1,9-20").
  With TUNER_QUALITY_TRACE=DIR set, each run's whole value sequence (one value a line, %.17g,
  in evaluation order) is written to DIR/FUNCTION_TUNER_SEED.txt, so that runs on two
  machines can be compared value by value (bench/tune/run_skopt_seeds.sh uses it).
"""
import math
import os
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")


def branin(x):
    x1, x2 = x
    b, c, t = 5.1 / (4 * math.pi ** 2), 5 / math.pi, 1 / (8 * math.pi)
    return (x2 - b * x1 * x1 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10


A = np.array([[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14],
              [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]])
P = 1e-4 * np.array([[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
                     [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]])
ALPHA = np.array([1.0, 1.2, 3.0, 3.2])


def hartmann6(x):
    x = np.asarray(x)
    return float(-(ALPHA * np.exp(-(A * (x - P) ** 2).sum(1))).sum())


FUNCTIONS = {"branin": (branin, [(-5.0, 10.0), (0.0, 15.0)]),
             "hartmann6": (hartmann6, [(0.0, 1.0)] * 6)}


def run_skopt(f, bounds, seed, budget, in_flight):
    from skopt import Optimizer
    opt = Optimizer(bounds, base_estimator="RF", acq_func="gp_hedge", acq_optimizer="sampling",
                    n_initial_points=10, random_state=seed)
    pending = list(opt.ask(n_points=in_flight, strategy="cl_max"))
    ys = []
    while len(ys) < budget:
        x = pending.pop(0)
        y = f(x)
        ys.append(y)
        opt.tell(x, y)
        if len(ys) + len(pending) < budget:
            pending.append(opt.ask())
    return ys


def run_optuna(f, bounds, seed, budget, in_flight):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed, constant_liar=True))

    def ask():
        t = study.ask()
        return t, [t.suggest_float("x%d" % i, lo, hi) for i, (lo, hi) in enumerate(bounds)]

    pending = [ask() for _ in range(in_flight)]
    ys = []
    while len(ys) < budget:
        t, x = pending.pop(0)
        y = f(x)
        ys.append(y)
        study.tell(t, y)
        if len(ys) + len(pending) < budget:
            pending.append(ask())
    return ys


def run_random(f, bounds, seed, budget, in_flight):
    rng = np.random.default_rng(seed)
    return [f([rng.uniform(lo, hi) for lo, hi in bounds]) for _ in range(budget)]


def parse_seeds(spec):
    if spec.isdigit():
        return list(range(1, int(spec) + 1))
    seeds = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        seeds += list(range(int(lo), int(hi or lo) + 1))
    return seeds


def main():
    seeds = parse_seeds(sys.argv[1] if len(sys.argv) > 1 else "20")
    budget = int(sys.argv[2]) if len(sys.argv) > 2 else 128
    in_flight = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    tuners = (sys.argv[4] if len(sys.argv) > 4 else "skopt,optuna").split(",")
    functions = (sys.argv[5] if len(sys.argv) > 5 else ",".join(FUNCTIONS)).split(",")
    trace = os.environ.get("TUNER_QUALITY_TRACE")
    runners = {"skopt": run_skopt, "optuna": run_optuna, "random-numpy": run_random}
    print("function,tuner,seed,best_at_64,best_at_128", flush=True)
    for seed in seeds:  # seeds outermost: a cut-short run still covers both
        for name in functions:
            f, bounds = FUNCTIONS[name]
            for tuner in tuners:
                ys = runners[tuner](f, bounds, seed, budget, in_flight)
                if trace:
                    with open(os.path.join(trace, "%s_%s_%d.txt" % (name, tuner, seed)), "w") as t:
                        t.writelines("%.17g\n" % y for y in ys)
                best = np.minimum.accumulate(ys)
                print("%s,%s,%d,%.9g,%.9g" % (name, tuner, seed, best[min(63, budget - 1)],
                                               best[-1]), flush=True)


if __name__ == "__main__":
    main()
