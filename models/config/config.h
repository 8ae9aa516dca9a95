// Typed, self-documenting configuration.
//
// Every configuration struct describes its keys once, in a `visit(config::Visitor&)` member: the
// key name, a reference to the member, its default, legal range, unit and a one-line doc string.
// The same description is walked by different visitors to
//   - load a YAML file plus `--set key=value` overrides (Loader): strict units, range checks,
//   unknown
//     keys are errors that name the file, line and dotted key path;
//   - write the fully resolved configuration back out (to YAML text and to JSON);
//   - generate docs/configuration.md (DocWriter).
// so documentation, parsing and output cannot drift apart.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/common/error.h"
#include "models/common/units.h"

namespace fabricsim::config {

// Raised for any bad input: config file, override or cross-field check. `what()` is the complete
// user-facing message, e.g. "configs/x.yaml:12: switch.ports: 300 is out of range [1, 512]".
class ConfigError : public InputError {
 public:
  using InputError::InputError;
};

class Configurable;

// A list of sections: a YAML sequence of mappings, every element one Configurable of the same
// type (e.g. `switch_kinds:`, a list of named chips). Visitors reach the elements through this
// interface; ListOf<T> adapts a std::vector<T>. Element keys are addressed with the element's
// index: `switch_kinds[1].ports`, in messages and in `--set` overrides.
class SectionList {
 public:
  virtual ~SectionList() = default;
  virtual size_t size() const = 0;
  // Replaces the elements by `n` fresh ones (what `fresh` of ListOf makes).
  virtual void reset(size_t n) = 0;
  virtual Configurable& at(size_t i) = 0;
  // A fresh element, whose description the reference documents once, under the list's name.
  virtual std::unique_ptr<Configurable> prototype() const = 0;
  // True when a fresh element carries values of its own (e.g. another section's) that the keys an
  // element leaves out keep; false when such keys take the defaults their visit() states.
  virtual bool inherits() const = 0;
};

class Visitor {
 public:
  virtual ~Visitor() = default;

  // A nested mapping; keys visited between begin/end live under `name`.
  virtual void begin_section(const std::string& name, const std::string& doc) = 0;
  virtual void end_section() = 0;

  virtual void param(const std::string& key, int64_t& v, int64_t def, int64_t min, int64_t max,
                     const std::string& unit, const std::string& doc) = 0;
  virtual void param(const std::string& key, double& v, double def, double min, double max,
                     const std::string& unit, const std::string& doc) = 0;
  virtual void param(const std::string& key, bool& v, bool def, const std::string& doc) = 0;
  virtual void param(const std::string& key, Time& v, Time def, Time min, Time max,
                     const std::string& doc) = 0;
  virtual void param(const std::string& key, Bytes& v, Bytes def, Bytes min, Bytes max,
                     const std::string& doc) = 0;
  virtual void param(const std::string& key, BitRate& v, BitRate def, BitRate min, BitRate max,
                     const std::string& doc) = 0;
  virtual void param(const std::string& key, Frequency& v, Frequency def, Frequency min,
                     Frequency max, const std::string& doc) = 0;
  // Free text (file paths, names).
  virtual void param(const std::string& key, std::string& v, const std::string& def,
                     const std::string& doc) = 0;
  // One of a fixed set of names.
  virtual void choice(const std::string& key, std::string& v, const std::string& def,
                      const std::vector<std::string>& allowed, const std::string& doc) = 0;
  // A list of numbers; every element must lie in [min, max]. An empty default means "none".
  virtual void list(const std::string& key, std::vector<double>& v, const std::vector<double>& def,
                    double min, double max, const std::string& unit, const std::string& doc) = 0;
  // A list of sections (empty by default); `doc` describes the list and what an element is.
  virtual void section_list(const std::string& key, SectionList& list, const std::string& doc) = 0;

  // `key` (a key or section below the section being visited; dotted for deeper ones) can act
  // only when `holds()` is true of the loaded configuration. `when` says so for people, naming
  // keys in braces relative to this section: in `switch`, "{architecture}: voq" reads
  // "switch.architecture: voq" (in an element of switch_kinds, "switch_kinds[1].architecture").
  // The keys it names decide, and are never judged by it. Declared before `key` is visited: the
  // reference shows it (to_markdown) and inert_keys() evaluates it; loading ignores it.
  virtual void applies_when(const std::string& key, const std::string& when,
                            const std::function<bool()>& holds) {
    (void)key;
    (void)when;
    (void)holds;
  }
};

// ListOf<T>: the SectionList of a std::vector<T> (T a Configurable). Without `fresh`, an element's
// absent keys take their visit() defaults; with it, every element starts as fresh() returns and
// keeps those values for the keys it does not give (a list whose elements default to another
// section's values: visit that section first).
template <class T>
class ListOf final : public SectionList {
 public:
  explicit ListOf(std::vector<T>& v, std::function<T()> fresh = {})
      : v_(v), fresh_(std::move(fresh)) {}
  size_t size() const override { return v_.size(); }
  void reset(size_t n) override { v_.assign(n, make()); }
  Configurable& at(size_t i) override { return v_[i]; }
  std::unique_ptr<Configurable> prototype() const override { return std::make_unique<T>(make()); }
  bool inherits() const override { return static_cast<bool>(fresh_); }

 private:
  T make() const { return fresh_ ? fresh_() : T{}; }
  std::vector<T>& v_;
  std::function<T()> fresh_;
};

// Where a key came from, for error messages ("file:line" or "--set switch.ports=3").
using KeyLocator = std::function<std::string(const std::string& dotted_key)>;

// Cross-field checks run after loading; `fail` throws ConfigError naming the key's location.
class Checker {
 public:
  explicit Checker(KeyLocator where, std::string prefix = "")
      : where_(std::move(where)), prefix_(std::move(prefix)) {}
  // A checker for a nested section: its keys are reported as "prefix.key".
  Checker under(const std::string& prefix) const {
    Checker c(where_, full(prefix));
    c.from_ = from_;
    c.to_ = to_;
    return c;
  }
  // A checker that reports the keys of section `from` as keys of section `to`: the checks a struct
  // makes of its own keys ("switch.ports") named where an element of a list holds them
  // (renamed("switch", "switch_kinds[1]"): "switch_kinds[1].ports").
  Checker renamed(const std::string& from, const std::string& to) const {
    Checker c(*this);
    c.from_ = from;
    c.to_ = to;
    return c;
  }
  void require(bool ok, const std::string& dotted_key, const std::string& message) const {
    if (!ok) fail(dotted_key, message);
  }
  [[noreturn]] void fail(const std::string& dotted_key, const std::string& message) const;
  // The key as fail() names it (prefixed, renamed): for a message that names a second key.
  std::string key(const std::string& dotted_key) const { return full(dotted_key); }

 private:
  std::string full(const std::string& key) const {
    std::string k = prefix_.empty() ? key : key.empty() ? prefix_ : prefix_ + "." + key;
    if (!from_.empty() && (k == from_ || k.rfind(from_ + ".", 0) == 0))
      k = to_ + k.substr(from_.size());
    return k;
  }
  KeyLocator where_;
  std::string prefix_;
  std::string from_, to_;  // renamed()
};

// Anything with `void visit(Visitor&)` can be loaded, printed and documented.
class Configurable {
 public:
  virtual ~Configurable() = default;
  virtual void visit(Visitor& v) = 0;
  virtual void validate(const Checker& /*c*/) const {}
};

// The keys a file or a --set gave (not those left at their defaults), each with where it was
// given: "file:line" or "--set KEY=VALUE". Keys of list elements by index
// ("switch_kinds[1].ports"). Not among them: the keys of a section the file tags `!variant`
// (`scheduler: !variant`), which it states for the configurations made from it (the crossbar of a
// shared-memory chip made one with --set switch.architecture=voq), unless a --set gives them.
using KeyOrigins = std::map<std::string, std::string>;

// Loads `path` (may be empty: defaults only) and applies overrides "a.b.c=value" in order, then
// runs validate(). Throws ConfigError on any problem. Values given as YAML scalars; an override
// value is parsed as YAML, so lists are written "[1, 2, 3]". With `given`, notes there the keys
// the file and the overrides gave.
void load(Configurable& cfg, const std::string& path, const std::vector<std::string>& overrides,
          KeyOrigins* given = nullptr);

// A key that cannot act in a configuration: the condition it needs (Visitor::applies_when, key
// names in full) and what the keys that condition names hold ("switch.architecture is
// shared_memory").
struct Inert {
  std::string when;
  std::string now;
  std::vector<std::string> deciders;  // the keys `when` names, in full
};
// Every key of `cfg` (of each element of a list of sections) that cannot act in it: for each, the
// outermost applies_when condition, on the key or a section above it, that does not hold. `cfg` is
// only read. Throws std::logic_error when a condition names a key the description does not have.
std::map<std::string, Inert> inert_keys(Configurable& cfg);

// `part`'s keys as the section `name` of the configuration `v` walks.
inline void visit_section(Visitor& v, const std::string& name, const std::string& doc,
                          Configurable& part) {
  v.begin_section(name, doc);
  part.visit(v);
  v.end_section();
}

// Copies every key's value of `from` into `to`, a Configurable of the same type (both visited
// in the same order): the deep copy of a section held behind a base pointer (a registered
// algorithm's own section).
void copy_values(Configurable& from, Configurable& to);
// The dotted keys of `part` whose values differ from the defaults its visit() declares (lists of
// sections not looked into): a key that a setting such as a named profile leaves nothing to do
// can be refused when given. `part` is only read (visit() takes it mutable).
std::vector<std::string> keys_off_default(Configurable& part);
// The resolved configuration, as YAML text (units spelled out, e.g. "800Gbps") and as JSON.
std::string to_yaml(Configurable& cfg);
nlohmann::json to_json(Configurable& cfg);

// Markdown reference of every key: path, type, unit, default, range, meaning.
std::string to_markdown(Configurable& cfg, const std::string& title);

// The candidate closest to `word` (edit distance at most 2; the first wins ties), or "": the
// "did you mean" of messages about names (keys, choices, names a configuration defines).
std::string closest_name(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace fabricsim::config
