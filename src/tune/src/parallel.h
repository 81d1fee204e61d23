// A small persistent pool for data-parallel loops (kernel rows, predictions): the caller's
// thread takes the first chunk, the pool's threads the others; run() returns when all are done.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace wavekit::tune::detail {

class ParallelFor {
 public:
  explicit ParallelFor(int threads) {
    for (int t = 1; t < threads; ++t) workers_.emplace_back([this, t] { loop(t); });
  }
  ~ParallelFor() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    start_.notify_all();
    for (auto& w : workers_) w.join();
  }
  ParallelFor(const ParallelFor&) = delete;
  ParallelFor& operator=(const ParallelFor&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls body(begin, end) over [0, n) split into threads() contiguous chunks.
  void run(std::size_t n, const std::function<void(std::size_t, std::size_t)>& body) {
    if (workers_.empty() || n < 2) {
      if (n) body(0, n);
      return;
    }
    {
      std::lock_guard lock(mutex_);
      body_ = &body;
      n_ = n;
      pending_ = workers_.size();
      ++generation_;
    }
    start_.notify_all();
    auto [b, e] = chunk(0, n);
    body(b, e);
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
    body_ = nullptr;
  }

 private:
  std::pair<std::size_t, std::size_t> chunk(int t, std::size_t n) const {
    std::size_t parts = workers_.size() + 1;
    return {n * t / parts, n * (t + 1) / parts};
  }
  void loop(int t) {
    std::size_t seen = 0;
    for (;;) {
      const std::function<void(std::size_t, std::size_t)>* body;
      std::size_t n;
      {
        std::unique_lock lock(mutex_);
        start_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        body = body_;
        n = n_;
      }
      auto [b, e] = chunk(t, n);
      if (b < e) (*body)(b, e);
      {
        std::lock_guard lock(mutex_);
        if (--pending_ == 0) done_.notify_one();
      }
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_, done_;
  const std::function<void(std::size_t, std::size_t)>* body_ = nullptr;
  std::size_t n_ = 0, pending_ = 0, generation_ = 0;
  bool stop_ = false;
};

}  // namespace wavekit::tune::detail
