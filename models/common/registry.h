// A table of named implementations behind one model interface (schedulers, credit units, ...).
//
// Not hardware: the seam between the model and the blocks that plug into it. The model owns each
// registry and fills it with its own implementations; other libraries (the Verilated RTL, rtl/)
// add theirs at start-up, so that the model never includes or links them. Names are listed
// sorted, so that choices and messages do not depend on the order of registration.
//
// Registration happens before any simulation starts (from one thread); lookups afterwards are
// read-only. A name registered twice is a programming error (std::logic_error); an unknown name
// looked up is an input error (std::invalid_argument listing the valid names).
#pragma once

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fabricsim {

// "a, b, c"
inline std::string join_names(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

template <class Entry>
class Registry {
 public:
  // `what` names an entry in messages: "scheduler algorithm", "credit unit impl".
  explicit Registry(std::string what) : what_(std::move(what)) {}

  Entry& add(const std::string& name, Entry entry) {
    if (name.empty()) throw std::logic_error(what_ + ": empty name");
    if (entries_.count(name)) throw std::logic_error(what_ + " '" + name + "' registered twice");
    names_.insert(std::upper_bound(names_.begin(), names_.end(), name), name);
    return entries_.emplace(name, std::move(entry)).first->second;
  }

  const Entry* find(const std::string& name) const {
    const auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second;
  }
  Entry* find(const std::string& name) {
    const auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second;
  }
  // "unknown <what> 'name' (valid: a, b)" for a name that is not registered.
  const Entry& at(const std::string& name) const {
    if (const Entry* e = find(name)) return *e;
    throw std::invalid_argument("unknown " + what_ + " '" + name +
                                "' (valid: " + join_names(names_) + ")");
  }

  const std::vector<std::string>& names() const { return names_; }  // sorted
  bool contains(const std::string& name) const { return entries_.count(name) != 0; }

 private:
  std::string what_;
  std::map<std::string, Entry> entries_;
  std::vector<std::string> names_;
};

}  // namespace fabricsim
