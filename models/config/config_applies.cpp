// Which keys of a loaded configuration can act: the applies_when conditions of the description
// (Visitor::applies_when) evaluated on it (`fabricsim check` and `run` warn about given keys that
// cannot; the reference, config_output.cpp, shows the conditions).
#include <algorithm>
#include <set>
#include <stdexcept>

#include "models/config/config.h"
#include "models/config/config_text.h"

namespace fabricsim::config {

using namespace detail;

namespace {

// One applies_when, resolved: the key or section it governs, its text, the keys it names, and
// whether it holds.
struct Condition {
  std::string target;
  std::string when;
  std::vector<std::string> deciders;
  bool holds = true;
  size_t order = 0;  // declaration order
};

bool under(const std::string& key, const std::string& target) {
  if (key.compare(0, target.size(), target) != 0) return false;
  return key.size() == target.size() || key[target.size()] == '.' || key[target.size()] == '[';
}

// Walks a loaded configuration: every key's value as text, every condition as it is declared.
class InertFinder final : public Visitor {
 public:
  std::vector<Condition> conditions;
  std::vector<std::string> keys;             // every key, in visiting order
  std::map<std::string, std::string> value;  // key -> its value, as the YAML output writes it
  std::set<std::string> sections;            // every section (an empty one too)

  void begin_section(const std::string& name, const std::string&) override {
    path_.push_back(join_key(path_.back(), name));
    sections.insert(path_.back());
  }
  void end_section() override { path_.pop_back(); }
  void param(const std::string& k, int64_t& v, int64_t, int64_t, int64_t, const std::string&,
             const std::string&) override {
    note(k, text(v));
  }
  void param(const std::string& k, double& v, double, double, double, const std::string&,
             const std::string&) override {
    note(k, text(v));
  }
  void param(const std::string& k, bool& v, bool, const std::string&) override { note(k, text(v)); }
  void param(const std::string& k, Time& v, Time, Time, Time, const std::string&) override {
    note(k, text(v));
  }
  void param(const std::string& k, Bytes& v, Bytes, Bytes, Bytes, const std::string&) override {
    note(k, text(v));
  }
  void param(const std::string& k, BitRate& v, BitRate, BitRate, BitRate,
             const std::string&) override {
    note(k, text(v));
  }
  void param(const std::string& k, Frequency& v, Frequency, Frequency, Frequency,
             const std::string&) override {
    note(k, text(v));
  }
  void param(const std::string& k, std::string& v, const std::string&,
             const std::string&) override {
    note(k, v.empty() ? "\"\"" : v);
  }
  void choice(const std::string& k, std::string& v, const std::string&,
              const std::vector<std::string>&, const std::string&) override {
    note(k, v);
  }
  void list(const std::string& k, std::vector<double>& v, const std::vector<double>&, double,
            double, const std::string&, const std::string&) override {
    note(k, text(v));
  }
  void section_list(const std::string& k, SectionList& list, const std::string&) override {
    const std::string key = join_key(path_.back(), k);
    for (size_t i = 0; i < list.size(); ++i) {
      path_.push_back(key + "[" + std::to_string(i) + "]");
      list.at(i).visit(*this);
      path_.pop_back();
    }
  }
  void applies_when(const std::string& key, const std::string& when,
                    const std::function<bool()>& holds) override {
    Condition c;
    c.target = join_key(path_.back(), key);
    c.when = expand_when(when, path_.back(), false, &c.deciders);
    c.holds = holds();
    c.order = conditions.size();
    conditions.push_back(std::move(c));
  }

 private:
  void note(const std::string& k, std::string v) {
    const std::string key = join_key(path_.back(), k);
    keys.push_back(key);
    value[key] = std::move(v);
  }
  std::vector<std::string> path_{""};
};

}  // namespace

std::map<std::string, Inert> inert_keys(Configurable& cfg) {
  InertFinder f;
  cfg.visit(f);
  // A condition that names no key, or governs nothing, is a slip of its declaration.
  for (const Condition& c : f.conditions) {
    for (const std::string& d : c.deciders)
      if (!f.value.count(d))
        throw std::logic_error("applies_when on " + c.target + ": '" + d + "' is not a key");
    if (!f.sections.count(c.target) &&
        std::none_of(f.keys.begin(), f.keys.end(),
                     [&](const std::string& k) { return under(k, c.target); }))
      throw std::logic_error("applies_when on " + c.target + ": no such key or section");
  }
  // The outermost first: a key under `nic` with NICs off fails for nic.enabled, whatever else.
  std::vector<const Condition*> failing;
  for (const Condition& c : f.conditions)
    if (!c.holds) failing.push_back(&c);
  std::stable_sort(failing.begin(), failing.end(), [](const Condition* a, const Condition* b) {
    return a->target.size() < b->target.size();
  });
  std::map<std::string, Inert> out;
  for (const std::string& key : f.keys) {
    for (const Condition* c : failing) {
      if (!under(key, c->target) ||
          std::find(c->deciders.begin(), c->deciders.end(), key) != c->deciders.end())
        continue;
      Inert& in = out[key];
      in.when = c->when;
      in.deciders = c->deciders;
      std::vector<std::string> named;
      for (const std::string& d : c->deciders) {
        if (std::find(named.begin(), named.end(), d) != named.end()) continue;
        named.push_back(d);
        in.now += (in.now.empty() ? "" : ", ") + d + " is " + f.value.at(d);
      }
      break;
    }
  }
  return out;
}

}  // namespace fabricsim::config
