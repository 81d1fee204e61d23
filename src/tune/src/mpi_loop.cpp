// The MPI executor: rank 0 sends a configuration (JSON) to a free worker rank and receives
// results from any rank as they complete; a stop message ends the workers.
#include <mpi.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "wavekit/support/error.h"
#include "wavekit/tune/mpi.h"

namespace wavekit::tune {
namespace {

constexpr int kTagJob = 1, kTagResult = 2, kTagStop = 3;

void send_text(const std::string& text, int dest, int tag) {
  MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, dest, tag, MPI_COMM_WORLD);
}

std::string receive_text(int source, int* tag, int* from) {
  // MPI_Iprobe with a short sleep, not MPI_Probe: OpenMPI's blocking probe spins a core, which
  // a waiting manager would take from the workers (one rank per core, or oversubscribed).
  MPI_Status st;
  for (int flag = 0, idle = 0;; ++idle) {
    MPI_Iprobe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (flag) break;
    std::this_thread::sleep_for(std::chrono::microseconds(idle < 100 ? 50 : 1000));
  }
  int n = 0;
  MPI_Get_count(&st, MPI_CHAR, &n);
  std::string text(static_cast<std::size_t>(n), '\0');
  MPI_Recv(text.data(), n, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  *tag = st.MPI_TAG;
  *from = st.MPI_SOURCE;
  return text;
}

nlohmann::json job_json(const Record& r) {
  nlohmann::json numbers = nlohmann::json::object();
  for (auto& [k, v] : r.config.number) numbers[k] = v;
  return {{"id", r.id}, {"numbers", numbers}};
}

class MpiExecutor : public Executor {
 public:
  explicit MpiExecutor(int size) {
    for (int r = 1; r < size; ++r) free_.insert(r);
    slots_ = size - 1;
  }
  int slots() override { return slots_; }
  void submit(const Record& job) override {
    int rank = *free_.begin();
    free_.erase(free_.begin());
    jobs_[job.id] = job;
    send_text(job_json(job).dump(), rank, kTagJob);
  }
  Record wait() override {
    int tag, from;
    std::string text = receive_text(MPI_ANY_SOURCE, &tag, &from);
    auto j = nlohmann::json::parse(text);
    Record r = jobs_.at(j.at("id").get<int>());
    jobs_.erase(r.id);
    r.value = j.at("value").get<double>();
    r.score = j.at("score").get<double>();
    r.status = j.at("status").get<std::string>();
    r.note = j.at("note").get<std::string>();
    r.seconds = j.at("seconds").get<double>();
    r.worker = from;
    free_.insert(from);
    return r;
  }

 private:
  std::set<int> free_;
  std::map<int, Record> jobs_;
  int slots_ = 0;
};

}  // namespace

bool mpi_built() { return true; }

void mpi_init(int* argc, char*** argv) {
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) MPI_Init(argc, argv);
}

void mpi_finalize() {
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin) MPI_Finalize();
}

int mpi_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int mpi_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

std::vector<Record> run_loop_mpi(const Space& space, Tuner& tuner, Objective& objective,
                                 const LoopOptions& options, std::ostream* progress) {
  int rank = mpi_rank(), size = mpi_size();
  if (rank == 0) {
    std::vector<Record> out;
    if (size == 1) return run_loop(space, tuner, objective, options, progress);
    MpiExecutor ex(size);
    try {
      out = run_loop(space, tuner, objective, options, progress, &ex);
    } catch (...) {
      for (int r = 1; r < size; ++r) send_text("", r, kTagStop);
      throw;
    }
    for (int r = 1; r < size; ++r) send_text("", r, kTagStop);
    return out;
  }
  for (;;) {
    int tag, from;
    std::string text = receive_text(0, &tag, &from);
    if (tag == kTagStop) return {};
    auto j = nlohmann::json::parse(text);
    std::map<std::string, double> numbers;
    for (auto& [k, v] : j.at("numbers").items()) numbers[k] = v.get<double>();
    Record job;
    job.id = j.at("id").get<int>();
    job.config = space.decode(space.encode(numbers));
    Record r = evaluate_job(objective, job);
    nlohmann::json res = {{"id", r.id},         {"value", r.value}, {"score", r.score},
                          {"status", r.status}, {"note", r.note},   {"seconds", r.seconds}};
    if (!std::isfinite(r.value)) res["value"] = 0.0, res["status"] = "failed";
    send_text(res.dump(), 0, kTagResult);
  }
}

}  // namespace wavekit::tune
