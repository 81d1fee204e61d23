// The manager/worker loop, the history file, the chart, and the objectives.
#include "wavekit/tune/loop.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <fstream>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <ostream>
#include <regex>
#include <sstream>
#include <thread>

#include "wavekit/support/error.h"

namespace wavekit::tune {
namespace {

double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

class FunctionObjective : public Objective {
 public:
  explicit FunctionObjective(std::string name) : name_(std::move(name)) {}
  EvalResult evaluate(const Config& c) override {
    EvalResult r;
    if (name_ == "branin") {
      r.value = branin(c.number.at("x1"), c.number.at("x2"));
    } else {
      double x[6];
      for (int k = 0; k < 6; ++k) x[k] = c.number.at("x" + std::to_string(k + 1));
      r.value = hartmann6(x);
    }
    r.score = r.value;
    return r;
  }
  std::string describe() const override { return name_; }

 private:
  std::string name_;
};

class CommandObjective : public Objective {
 public:
  CommandObjective(CommandSpec spec, const Space& space) : spec_(std::move(spec)) {
    try {
      regex_ = std::regex(spec_.metric_regex);
    } catch (const std::regex_error& e) {
      fail("command objective", "bad metric regex '" + spec_.metric_regex + "': " + e.what());
    }
    if (regex_.mark_count() < 1)
      fail("command objective", "the metric regex needs a capture group, e.g. 'time: ([0-9.]+)'");
    // every {name} must be a parameter
    const std::string& t = spec_.command_template;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t[i] == '{' && i + 1 < t.size() && t[i + 1] == '{') {
        ++i;
        continue;
      }
      if (t[i] != '{') continue;
      auto close = t.find('}', i);
      if (close == std::string::npos) fail("command objective", "unclosed '{' in the command");
      std::string name = t.substr(i + 1, close - i - 1);
      bool known = false;
      for (auto& p : space.parameters()) known |= p.name == name;
      if (!known)
        fail("command objective", "the command names {" + name + "}, which is not a parameter");
      i = close;
    }
    if (!(spec_.timeout_s > 0)) fail("command objective", "the timeout must be positive");
  }

  std::string substitute(const Config& c) const {
    const std::string& t = spec_.command_template;
    std::string out;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if ((t[i] == '{' || t[i] == '}') && i + 1 < t.size() && t[i + 1] == t[i]) {
        out += t[i++];
        continue;
      }
      if (t[i] != '{') {
        out += t[i];
        continue;
      }
      auto close = t.find('}', i);
      std::string name = t.substr(i + 1, close - i - 1);
      auto it = c.text.find(name);
      out += it == c.text.end() ? "" : it->second;  // inactive parameter: empty
      i = close;
    }
    return out;
  }

  EvalResult evaluate(const Config& c) override {
    EvalResult r;
    std::string cmd = substitute(c);
    int fds[2];
    if (pipe(fds) != 0) fail("command objective", "pipe failed");
    pid_t pid = fork();
    if (pid < 0) fail("command objective", "fork failed");
    if (pid == 0) {
      setpgid(0, 0);
      dup2(fds[1], 1);
      dup2(fds[1], 2);
      close(fds[0]);
      close(fds[1]);
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    setpgid(pid, pid);
    close(fds[1]);
    std::string output;
    double deadline = now_s() + spec_.timeout_s;
    bool timed_out = false;
    char buf[4096];
    for (;;) {
      double left = deadline - now_s();
      if (left <= 0) {
        timed_out = true;
        break;
      }
      pollfd p{fds[0], POLLIN, 0};
      int ready = poll(&p, 1, static_cast<int>(std::min(left, 1.0) * 1000) + 1);
      if (ready < 0 && errno != EINTR) break;
      if (ready <= 0) continue;
      ssize_t n = read(fds[0], buf, sizeof buf);
      if (n <= 0) break;
      output.append(buf, static_cast<std::size_t>(n));
      if (output.size() > (16u << 20)) output.erase(0, output.size() - (8u << 20));
    }
    if (timed_out) kill(-pid, SIGKILL);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!timed_out) kill(-pid, SIGKILL);  // leftovers of the command's group
    auto last_line = [&] {
      std::string s = output;
      while (!s.empty() && s.back() == '\n') s.pop_back();
      auto nl = s.rfind('\n');
      s = nl == std::string::npos ? s : s.substr(nl + 1);
      return s.substr(0, 200);
    };
    if (timed_out) {
      r.status = "timeout";
      r.note = "killed after " + std::to_string(spec_.timeout_s) + " s";
      return r;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      r.status = "failed";
      r.note = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                   : "exit code " + std::to_string(WEXITSTATUS(status));
      if (!last_line().empty()) r.note += ": " + last_line();
      return r;
    }
    std::smatch m, last;
    bool found = false;
    for (auto it = std::sregex_iterator(output.begin(), output.end(), regex_);
         it != std::sregex_iterator(); ++it) {
      last = *it;
      found = true;
    }
    if (!found) {
      r.status = "failed";
      r.note = "the metric regex matched nothing in the output";
      return r;
    }
    char* end;
    std::string text = last[1].str();
    double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || !std::isfinite(v)) {
      r.status = "failed";
      r.note = "the metric '" + text + "' is not a number";
      return r;
    }
    r.score = v;
    r.value = spec_.maximize ? -v : v;
    return r;
  }
  std::string describe() const override { return "command: " + spec_.command_template; }

 private:
  CommandSpec spec_;
  std::regex regex_;
};

class SvmObjective : public Objective {
 public:
  explicit SvmObjective(SvmObjectiveSpec s) : s_(std::move(s)) {
    if (s_.folds.empty()) fail("svm objective", "no folds");
    if (s_.metric != "accuracy" && s_.metric != "balanced_accuracy" && s_.metric != "roc_auc")
      fail("svm objective", "unknown metric '" + s_.metric + "'");
  }
  EvalResult evaluate(const Config& c) override {
    EvalResult r;
    Metrics m = cross_validate(s_.data, s_.folds, svm_params_for(s_.base, c), s_.scale);
    double v = s_.metric == "accuracy"  ? m.accuracy
               : s_.metric == "roc_auc" ? m.roc_auc
                                        : m.balanced_accuracy;
    r.score = v;
    r.value = -v;
    char buf[160];
    std::snprintf(buf, sizeof buf, "acc %.4f bal %.4f auc %.4f majority %.4f", m.accuracy,
                  m.balanced_accuracy, m.roc_auc, m.majority_baseline);
    r.note = buf;
    return r;
  }
  std::string describe() const override { return "svm (" + s_.metric + ")"; }

 private:
  SvmObjectiveSpec s_;
};

nlohmann::json record_json(const Record& r) {
  nlohmann::json params = nlohmann::json::object(), numbers = nlohmann::json::object();
  for (auto& [k, v] : r.config.text) params[k] = v;
  for (auto& [k, v] : r.config.number) numbers[k] = v;
  nlohmann::json j = {{"id", r.id},           {"params", params},  {"numbers", numbers},
                      {"value", r.value},     {"score", r.score},  {"status", r.status},
                      {"seconds", r.seconds}, {"worker", r.worker}};
  if (r.status != "ok") j["raw"] = nullptr;
  if (!r.note.empty()) j["note"] = r.note;
  return j;
}

}  // namespace

std::unique_ptr<Objective> function_objective(const std::string& name) {
  if (name != "branin" && name != "hartmann6")
    fail("objective", "unknown function '" + name + "' (branin, hartmann6)");
  return std::make_unique<FunctionObjective>(name);
}

Space function_space(const std::string& name) {
  Space s;
  if (name == "branin") {
    Parameter a;
    a.name = "x1", a.low = -5, a.high = 10;
    Parameter b;
    b.name = "x2", b.low = 0, b.high = 15;
    s.add(a);
    s.add(b);
  } else if (name == "hartmann6") {
    for (int k = 1; k <= 6; ++k) {
      Parameter p;
      p.name = "x" + std::to_string(k);
      s.add(p);
    }
  } else {
    fail("objective", "unknown function '" + name + "' (branin, hartmann6)");
  }
  return s;
}

std::unique_ptr<Objective> command_objective(const CommandSpec& spec, const Space& space) {
  return std::make_unique<CommandObjective>(spec, space);
}

std::unique_ptr<Objective> svm_objective(SvmObjectiveSpec spec) {
  return std::make_unique<SvmObjective>(std::move(spec));
}

SvmParams svm_params_for(const SvmParams& base, const Config& c) {
  SvmParams p = base;
  auto get = [&](const char* name, double* out) {
    auto it = c.number.find(name);
    if (it != c.number.end()) *out = it->second;
  };
  auto kt = c.text.find("kernel");
  if (kt != c.text.end()) p.kernel.type = kernel_from_name(kt->second);
  get("C", &p.C);
  get("a", &p.mix);
  get("s", &p.first.gamma);
  get("coef0", &p.first.coef0);
  get("g", &p.second.gamma);
  if (p.kernel.type != Kernel::mixed) {
    get("gamma", &p.kernel.gamma);
    get("coef0", &p.kernel.coef0);
    double deg = p.kernel.degree;
    get("degree", &deg);
    p.kernel.degree = static_cast<int>(deg);
  }
  return p;
}

std::vector<Record> read_history(const std::string& path, const Space& space) {
  std::ifstream in(path);
  std::vector<Record> out;
  if (!in) return out;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      // a line cut short by a killed run: the last one only
      if (in.peek() == EOF) break;
      fail(path + ":" + std::to_string(line_no), "not a JSON history record");
    }
    Record r;
    r.id = j.value("id", 0);
    std::map<std::string, double> numbers;
    for (auto& [k, v] : j.at("numbers").items()) numbers[k] = v.get<double>();
    r.config = space.decode(space.encode(numbers));
    r.value = j.at("value").get<double>();
    r.score = j.value("score", 0.0);
    r.status = j.value("status", "ok");
    r.note = j.value("note", "");
    r.seconds = j.value("seconds", 0.0);
    r.worker = j.value("worker", 0);
    out.push_back(r);
  }
  return out;
}

Record evaluate_job(Objective& objective, const Record& job) {
  Record r = job;
  double t0 = now_s();
  try {
    EvalResult e = objective.evaluate(r.config);
    r.value = e.value;
    r.score = e.score;
    r.status = e.status;
    r.note = e.note;
  } catch (const std::exception& e) {
    r.status = "failed";
    r.note = e.what();
  }
  r.seconds = now_s() - t0;
  return r;
}

namespace {

// `slots` points in flight, evaluated in this thread, the oldest first.
class InlineExecutor : public Executor {
 public:
  InlineExecutor(Objective& objective, int slots) : objective_(objective), slots_(slots) {}
  int slots() override { return slots_; }
  void submit(const Record& job) override { queue_.push_back(job); }
  Record wait() override {
    Record job = queue_.front();
    queue_.pop_front();
    job.worker = static_cast<int>(job.id % slots_);
    return evaluate_job(objective_, job);
  }

 private:
  Objective& objective_;
  int slots_;
  std::deque<Record> queue_;
};

// One thread per slot.
class ThreadExecutor : public Executor {
 public:
  ThreadExecutor(Objective& objective, int slots) : objective_(objective), slots_(slots) {
    for (int w = 0; w < slots; ++w)
      threads_.emplace_back([this, w] {
        for (;;) {
          Record job;
          {
            std::unique_lock lock(mu_);
            cv_job_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
            if (jobs_.empty()) return;
            job = jobs_.front();
            jobs_.pop_front();
          }
          job.worker = w;
          Record r = evaluate_job(objective_, job);
          {
            std::lock_guard lock(mu_);
            results_.push_back(r);
          }
          cv_done_.notify_one();
        }
      });
  }
  ~ThreadExecutor() override {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
      jobs_.clear();
    }
    cv_job_.notify_all();
    for (auto& t : threads_) t.join();
  }
  int slots() override { return slots_; }
  void submit(const Record& job) override {
    {
      std::lock_guard lock(mu_);
      jobs_.push_back(job);
    }
    cv_job_.notify_one();
  }
  Record wait() override {
    std::unique_lock lock(mu_);
    cv_done_.wait(lock, [&] { return !results_.empty(); });
    Record r = results_.front();
    results_.pop_front();
    return r;
  }

 private:
  Objective& objective_;
  int slots_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_job_, cv_done_;
  std::deque<Record> jobs_, results_;
  bool stop_ = false;
};

}  // namespace

std::vector<Record> run_loop(const Space& space, Tuner& tuner, Objective& objective,
                             const LoopOptions& o, std::ostream* progress, Executor* executor) {
  if (o.budget < 1) fail("tune", "the budget must be at least 1");
  if (o.workers < 1) fail("tune", "at least one worker");
  std::vector<Record> done;
  double worst = -std::numeric_limits<double>::infinity();
  if (o.resume && !o.history.empty()) {
    done = read_history(o.history, space);
    for (auto& r : done) {
      tuner.tell(space.encode(r.config.number), r.value);
      worst = std::max(worst, r.value);
    }
    if (progress && !done.empty())
      *progress << "resumed " << done.size() << " evaluations from " << o.history << "\n";
  }
  std::ofstream history;
  if (!o.history.empty()) {
    history.open(o.history, o.resume ? std::ios::app : std::ios::trunc);
    if (!history) fail(o.history, "cannot write the history file");
  }
  std::vector<Record> deferred;  // failures before any finite value: told once one exists
  double best = std::numeric_limits<double>::infinity();
  for (auto& r : done)
    if (r.status == "ok") best = std::min(best, r.value);

  auto finish = [&](Record r) {
    bool ok = r.status == "ok" && std::isfinite(r.value);
    if (!ok) {
      if (r.status == "ok") {
        r.status = "failed";
        r.note = "the objective gave a non-finite value";
      }
      r.raw = r.value;
    }
    if (ok) {
      worst = std::max(worst, r.value);
      best = std::min(best, r.value);
    }
    auto tell_one = [&](Record& x) {
      if (x.status != "ok") {
        x.value = worst;
        x.note = (x.note.empty() ? "" : x.note + "; ") + "given the worst value seen";
      }
      tuner.tell(space.encode(x.config.number), x.value);
      if (history) {
        history << record_json(x).dump() << "\n";
        history.flush();
      }
      if (progress) {
        char buf[256];
        std::snprintf(buf, sizeof buf, "[%4zu/%d] %-8s value %-12.6g best %-12.6g %6.2f s  w%d",
                      done.size() + 1, o.budget, x.status.c_str(), x.value, best, x.seconds,
                      x.worker);
        *progress << buf << (x.status != "ok" && !x.note.empty() ? "  (" + x.note + ")" : "")
                  << "\n"
                  << std::flush;
      }
      done.push_back(x);
    };
    if (!std::isfinite(worst)) {
      deferred.push_back(r);
      return;
    }
    for (auto& x : deferred) tell_one(x);
    deferred.clear();
    tell_one(r);
  };

  int issued = static_cast<int>(done.size());
  std::deque<std::pair<Record, std::vector<double>>> in_flight;
  auto pending_points = [&] {
    std::vector<std::vector<double>> p;
    for (auto& f : in_flight) p.push_back(f.second);
    return p;
  };
  auto make_job = [&](int worker) {
    std::vector<double> x = space.canonical(tuner.ask(pending_points()));
    Record r;
    r.id = issued++;
    r.config = space.decode(x);
    r.worker = worker;
    return std::pair{r, x};
  };

  std::unique_ptr<Executor> own;
  if (!executor) {
    if (o.simulate || o.workers == 1)
      own = std::make_unique<InlineExecutor>(objective, o.workers);
    else
      own = std::make_unique<ThreadExecutor>(objective, o.workers);
    executor = own.get();
  }
  while (static_cast<int>(done.size() + deferred.size()) < o.budget) {
    while (static_cast<int>(in_flight.size()) < executor->slots() && issued < o.budget) {
      auto job = make_job(-1);
      in_flight.push_back(job);
      executor->submit(job.first);
    }
    Record r = executor->wait();
    in_flight.erase(std::find_if(in_flight.begin(), in_flight.end(),
                                 [&](auto& f) { return f.first.id == r.id; }));
    finish(r);
  }
  if (!deferred.empty()) {  // every evaluation failed
    for (auto& r : deferred) {
      r.value = std::numeric_limits<double>::quiet_NaN();
      if (history) history << record_json(r).dump() << "\n";
      done.push_back(r);
    }
  }
  return done;
}

std::string best_so_far_chart(const std::vector<Record>& records, int width, int height) {
  std::vector<double> best;
  double b = std::numeric_limits<double>::infinity();
  for (auto& r : records) {
    if (r.status == "ok" && std::isfinite(r.value)) b = std::min(b, r.value);
    best.push_back(b);
  }
  std::vector<double> finite;
  for (double v : best)
    if (std::isfinite(v)) finite.push_back(v);
  if (finite.empty()) return "(no successful evaluation)\n";
  double hi = finite.front(), lo = finite.back();
  if (hi == lo) hi = lo + 1;
  int n = static_cast<int>(best.size());
  width = std::max(10, std::min(width, n));
  std::vector<std::string> grid(height, std::string(width, ' '));
  for (int c = 0; c < width; ++c) {
    int idx = std::min(n - 1, (c + 1) * n / width - 1);
    double v = best[idx];
    if (!std::isfinite(v)) continue;
    int row = static_cast<int>(std::lround((hi - v) / (hi - lo) * (height - 1)));
    grid[std::clamp(row, 0, height - 1)][c] = '*';
  }
  std::ostringstream out;
  char buf[32];
  out << "best so far (lower is better) against evaluations\n";
  for (int r = 0; r < height; ++r) {
    double v = hi - (hi - lo) * r / (height - 1);
    std::snprintf(buf, sizeof buf, "%11.5g |", v);
    out << buf << grid[r] << "\n";
  }
  out << std::string(12, ' ') << "+" << std::string(width, '-') << "\n";
  std::snprintf(buf, sizeof buf, "%d", n);
  out << std::string(13, ' ') << "1"
      << std::string(std::max(1, width - 1 - static_cast<int>(std::strlen(buf))), ' ') << buf
      << "\n";
  return out.str();
}

}  // namespace wavekit::tune
