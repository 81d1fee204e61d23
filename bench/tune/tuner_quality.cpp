// Best-so-far of wavekit's tuners on Branin and Hartmann-6 at equal budgets: SEEDS seeds,
// BUDGET evaluations, IN_FLIGHT points in flight (simulated workers, the oldest completes
// first, so runs are reproducible). Prints CSV: function,tuner,seed,best_at_64,best_at_128.
//   tune_tuner_quality [seeds=20] [budget=128] [in_flight=4] [tuners=random,rf,gp,tpe] [liar]
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>

#include "wavekit/tune/loop.h"
#include "wavekit/tune/tuner.h"

using namespace wavekit::tune;

int main(int argc, char** argv) {
  int seeds = argc > 1 ? std::atoi(argv[1]) : 20;
  int budget = argc > 2 ? std::atoi(argv[2]) : 128;
  int in_flight = argc > 3 ? std::atoi(argv[3]) : 4;
  std::string tuners = argc > 4 ? argv[4] : "random,rf,gp,tpe";
  std::string liar = argc > 5 ? argv[5] : "";
  std::printf("function,tuner,seed,best_at_64,best_at_128\n");
  for (std::string fn : {"branin", "hartmann6"}) {
    std::stringstream list(tuners);
    for (std::string kind; std::getline(list, kind, ',');) {
      for (int seed = 1; seed <= seeds; ++seed) {
        Space s = function_space(fn);
        TunerOptions o;
        o.kind = kind;
        o.seed = static_cast<std::uint64_t>(seed);
        o.budget = budget;
        o.liar = liar;
        if (const char* acq = std::getenv("WAVEKIT_ACQ")) o.acquisition = acq;
        if (const char* c = std::getenv("WAVEKIT_CANDIDATES")) o.candidates = std::atoi(c);
        if (std::getenv("WAVEKIT_NO_LOCAL")) o.local_candidates = 0;
        if (std::getenv("WAVEKIT_LOCAL")) o.local_candidates = 1;
        auto tuner = make_tuner(s, o);
        auto obj = function_objective(fn);
        LoopOptions lo;
        lo.budget = budget;
        lo.workers = in_flight;
        lo.simulate = true;
        auto records = run_loop(s, *tuner, *obj, lo);
        double best = std::numeric_limits<double>::infinity(), at64 = best;
        for (std::size_t i = 0; i < records.size(); ++i) {
          best = std::min(best, records[i].value);
          if (i + 1 == 64) at64 = best;
        }
        std::printf("%s,%s,%d,%.9g,%.9g\n", fn.c_str(), kind.c_str(), seed, at64, best);
        std::fflush(stdout);
      }
    }
  }
}
