// A thread-safe table of entries by name: architectures, optimizers and schedules each keep one.
#pragma once

#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace psgrad {

// Entry is a struct with a `name` member. Entries are shared, never handed out as raw pointers into
// the map: registering a name again swaps in a new entry, and whoever found the old one keeps it alive.
template <class Entry>
class NamedRegistry {
 public:
  explicit NamedRegistry(std::initializer_list<Entry> built_in) {
    for (const auto& entry : built_in) add(entry);
  }

  // Registering a name twice replaces the earlier entry for every later find.
  void add(Entry entry) {
    std::string name = entry.name;
    auto shared = std::make_shared<const Entry>(std::move(entry));
    std::lock_guard<std::mutex> lock(mutex_);
    entries_[std::move(name)] = std::move(shared);
  }

  // Null when the name is not registered.
  std::shared_ptr<const Entry> find(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : it->second;
  }

  // Sorted, as the map keeps them.
  std::vector<std::string> names() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> names;
    for (const auto& [name, entry] : entries_) names.push_back(name);
    return names;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const Entry>> entries_;
};

}  // namespace psgrad
