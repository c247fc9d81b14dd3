// Models that the workers sharing a process's scheduler threads borrow for one gradient each.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "model/model.hpp"

namespace psgrad {

// With more workers than scheduler threads, only as many gradients are computed at once as there are
// threads, so only that many models' activation buffers need to be in use: one set per worker (4
// workers on 2 cores) no longer fits the cache beside the weights in flight. A model holds nothing of
// a worker's between gradients (weights, gradient buffer, batch and dropout stream are the worker's),
// so which one a gradient borrows does not change a bit of it.
class ModelWorkspaces {
 public:
  // `build` makes a model like every other when all are lent out; it is called outside the lock.
  explicit ModelWorkspaces(std::function<std::unique_ptr<Model>()> build) : build_(std::move(build)) {}

  // A model for one gradient, back in the pool when the lease goes.
  class Lease {
   public:
    Lease(ModelWorkspaces* owner, std::unique_ptr<Model> model) : owner_(owner), model_(std::move(model)) {}
    Lease(Lease&&) = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (model_) owner_->give_back(std::move(model_));
    }
    Model& model() const { return *model_; }

   private:
    ModelWorkspaces* owner_;
    std::unique_ptr<Model> model_;
  };

  Lease borrow() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        auto model = std::move(free_.back());
        free_.pop_back();
        return Lease(this, std::move(model));
      }
    }
    auto model = build_();
    const std::lock_guard<std::mutex> lock(mutex_);
    ++made_;
    return Lease(this, std::move(model));
  }

  // Makes models until there are `models`: as many as gradients can be computed at once (the threads),
  // so none is built, and nothing allocated, in the middle of a run.
  void reserve(std::size_t models) {
    while (models_made() < models) {
      auto model = build_();
      const std::lock_guard<std::mutex> lock(mutex_);
      ++made_;
      free_.push_back(std::move(model));
    }
  }

  // How many models were made: as many as gradients were ever computed at once.
  std::size_t models_made() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return made_;
  }

 private:
  void give_back(std::unique_ptr<Model> model) {
    const std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(model));
  }

  std::function<std::unique_ptr<Model>()> build_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Model>> free_;
  std::size_t made_ = 0;
};

}  // namespace psgrad
