// The output visitors over the Configurable description: the resolved configuration as YAML and
// as JSON (`fabricsim check`, summary.json), and the Markdown reference (docs/configuration.md).
#include <map>
#include <set>
#include <sstream>
#include <variant>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "models/config/config.h"
#include "models/config/config_text.h"

namespace fabricsim::config {

using namespace detail;

namespace {

class YamlWriter final : public Visitor {
 public:
  YamlWriter() { out_ << YAML::BeginMap; }
  std::string finish() {
    out_ << YAML::EndMap;
    return std::string(out_.c_str()) + "\n";
  }

  void begin_section(const std::string& name, const std::string&) override {
    out_ << YAML::Key << name << YAML::Value << YAML::BeginMap;
  }
  void end_section() override { out_ << YAML::EndMap; }
  void param(const std::string& k, int64_t& v, int64_t, int64_t, int64_t, const std::string&,
             const std::string&) override {
    put(k, text(v));
  }
  void param(const std::string& k, double& v, double, double, double, const std::string&,
             const std::string&) override {
    put(k, text(v));
  }
  void param(const std::string& k, bool& v, bool, const std::string&) override { put(k, text(v)); }
  void param(const std::string& k, Time& v, Time, Time, Time, const std::string&) override {
    put(k, text(v));
  }
  void param(const std::string& k, Bytes& v, Bytes, Bytes, Bytes, const std::string&) override {
    put(k, text(v));
  }
  void param(const std::string& k, BitRate& v, BitRate, BitRate, BitRate,
             const std::string&) override {
    put(k, text(v));
  }
  void param(const std::string& k, Frequency& v, Frequency, Frequency, Frequency,
             const std::string&) override {
    put(k, text(v));
  }
  // The emitter quotes free text when needed ("", "null", "a: b"), so it reads back unchanged.
  void param(const std::string& k, std::string& v, const std::string&,
             const std::string&) override {
    put(k, v);
  }
  void choice(const std::string& k, std::string& v, const std::string&,
              const std::vector<std::string>&, const std::string&) override {
    put(k, v);
  }
  void list(const std::string& k, std::vector<double>& v, const std::vector<double>&, double,
            double, const std::string&, const std::string&) override {
    out_ << YAML::Key << k << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (double x : v) out_ << text(x);
    out_ << YAML::EndSeq;
  }
  void section_list(const std::string& k, SectionList& list, const std::string&) override {
    out_ << YAML::Key << k << YAML::Value;
    if (list.size() == 0) out_ << YAML::Flow;  // "[]"
    out_ << YAML::BeginSeq;
    for (size_t i = 0; i < list.size(); ++i) {
      out_ << YAML::BeginMap;
      list.at(i).visit(*this);
      out_ << YAML::EndMap;
    }
    out_ << YAML::EndSeq;
  }

 private:
  void put(const std::string& k, const std::string& v) {
    out_ << YAML::Key << k << YAML::Value << v;
  }
  YAML::Emitter out_;
};

class JsonWriter final : public Visitor {
 public:
  nlohmann::json result;

  JsonWriter() : result(nlohmann::json::object()) { stack_.push_back(&result); }

  void begin_section(const std::string& name, const std::string&) override {
    nlohmann::json& s = (*stack_.back())[name] = nlohmann::json::object();
    stack_.push_back(&s);
  }
  void end_section() override { stack_.pop_back(); }
  void param(const std::string& k, int64_t& v, int64_t, int64_t, int64_t, const std::string&,
             const std::string&) override {
    put(k, v);
  }
  void param(const std::string& k, double& v, double, double, double, const std::string&,
             const std::string&) override {
    put(k, v);
  }
  void param(const std::string& k, bool& v, bool, const std::string&) override { put(k, v); }
  void param(const std::string& k, Time& v, Time, Time, Time, const std::string&) override {
    put(k, v.str());
  }
  void param(const std::string& k, Bytes& v, Bytes, Bytes, Bytes, const std::string&) override {
    put(k, v.str());
  }
  void param(const std::string& k, BitRate& v, BitRate, BitRate, BitRate,
             const std::string&) override {
    put(k, v.str());
  }
  void param(const std::string& k, Frequency& v, Frequency, Frequency, Frequency,
             const std::string&) override {
    put(k, v.str());
  }
  void param(const std::string& k, std::string& v, const std::string&,
             const std::string&) override {
    put(k, v);
  }
  void choice(const std::string& k, std::string& v, const std::string&,
              const std::vector<std::string>&, const std::string&) override {
    put(k, v);
  }
  void list(const std::string& k, std::vector<double>& v, const std::vector<double>&, double,
            double, const std::string&, const std::string&) override {
    put(k, v);
  }
  void section_list(const std::string& k, SectionList& list, const std::string&) override {
    nlohmann::json elements = nlohmann::json::array();
    for (size_t i = 0; i < list.size(); ++i) {
      nlohmann::json e = nlohmann::json::object();
      stack_.push_back(&e);
      list.at(i).visit(*this);
      stack_.pop_back();
      elements.push_back(std::move(e));
    }
    put(k, elements);
  }

 private:
  template <class T>
  void put(const std::string& k, const T& v) {
    (*stack_.back())[k] = v;
  }
  std::vector<nlohmann::json*> stack_;  // std::map-backed objects keep element addresses stable
};

// Markdown: collects a tree of sections first, because a section's own keys go in one table
// even when the description interleaves them with subsections.
class DocWriter final : public Visitor {
 public:
  DocWriter() { stack_.push_back(&root_); }

  std::string render(const std::string& title) const {
    std::string s = "# " + title + "\n\n";
    s +=
        "This file is generated from the code by `fabricsim config-docs`; do not edit it by hand.\n"
        "\n"
        "Keys are nested YAML mappings (the Key column gives the full dotted path, as used by\n"
        "`--set KEY=VALUE`). Unknown keys are errors. Values with a unit must spell the unit out\n"
        "exactly as listed (e.g. `500ns`, `64KiB`, `800Gbps`, `1.35GHz`); K/M/G/T are powers of\n"
        "1000, Ki/Mi/Gi/Ti powers of 1024, and a value must be a whole number of fs, bytes, bps "
        "or\n"
        "Hz. A configuration file is one YAML document; an empty one (or only comments) is an\n"
        "error: write `{}` to run on every default. `--set SECTION={KEY: VALUE, ...}` sets the "
        "keys it\n"
        "names, as one `--set SECTION.KEY=VALUE` each would; the section's other keys stay.\n"
        "Integers, numbers and booleans are plain YAML scalars: a quoted `\"5\"` or a `!!str 5` is "
        "a\n"
        "string and an error; integers are decimal without leading zeros (`010` and `0x10` are\n"
        "errors); booleans are `true` or `false` (not `yes`/`on`).\n"
        "A list of sections (a `KEY[]` section below) is a YAML sequence of mappings, each "
        "element\n"
        "holding the keys listed there; `--set KEY[i].SUBKEY=VALUE` sets a key of element i "
        "(from 0),\n"
        "and `KEY[n]`, n the list's length, appends an element. Messages name an element's keys "
        "by\n"
        "index: `KEY[1].SUBKEY`.\n"
        "A key or section that can act only in some configurations says when (\"Applies only "
        "when\n"
        "...\"; keys in a section's condition apply to every key below it): `fabricsim check` and "
        "`run`\n"
        "warn about a key the file or a `--set` gives where it cannot act, and with `--strict` "
        "refuse\n"
        "the configuration (exit 2).\n";
    render_section(root_, 1, s);
    return s;
  }

  void begin_section(const std::string& name, const std::string& doc) override {
    auto sec = std::make_unique<Section>();
    sec->path = join_key(stack_.back()->path, name);
    sec->doc = doc;
    sec->when = when_of(sec->path);
    Section* p = sec.get();
    stack_.back()->children.push_back(std::move(sec));
    stack_.push_back(p);
  }
  void end_section() override { stack_.pop_back(); }

  void param(const std::string& k, int64_t&, int64_t def, int64_t min, int64_t max,
             const std::string& unit, const std::string& doc) override {
    row(k, "integer", unit, code(text(def)), range_text(min, max), doc);
  }
  void param(const std::string& k, double&, double def, double min, double max,
             const std::string& unit, const std::string& doc) override {
    row(k, "number", unit, code(text(def)), range_text(min, max), doc);
  }
  void param(const std::string& k, bool&, bool def, const std::string& doc) override {
    row(k, "boolean", "", code(text(def)), "`true`, `false`", doc);
  }
  void param(const std::string& k, Time&, Time def, Time min, Time max,
             const std::string& doc) override {
    row(k, "time", "fs, ps, ns, us, ms, s", code(text(def)), range_text(min, max), doc);
  }
  void param(const std::string& k, Bytes&, Bytes def, Bytes min, Bytes max,
             const std::string& doc) override {
    row(k, "size", "B, KB, MB, GB, TB, KiB, MiB, GiB, TiB", code(text(def)), range_text(min, max),
        doc);
  }
  void param(const std::string& k, BitRate&, BitRate def, BitRate min, BitRate max,
             const std::string& doc) override {
    row(k, "bit rate", "bps, kbps, Mbps, Gbps, Tbps", code(text(def)), range_text(min, max), doc);
  }
  void param(const std::string& k, Frequency&, Frequency def, Frequency min, Frequency max,
             const std::string& doc) override {
    row(k, "frequency", "Hz, kHz, MHz, GHz", code(text(def)), range_text(min, max), doc);
  }
  void param(const std::string& k, std::string&, const std::string& def,
             const std::string& doc) override {
    row(k, "string", "", def.empty() ? "(empty)" : code(def), "", doc);
  }
  void choice(const std::string& k, std::string&, const std::string& def,
              const std::vector<std::string>& allowed, const std::string& doc) override {
    std::string values;
    for (const auto& a : allowed) values += (values.empty() ? "" : ", ") + code(a);
    row(k, "choice", "", code(def), values, doc);
  }
  void list(const std::string& k, std::vector<double>&, const std::vector<double>& def, double min,
            double max, const std::string& unit, const std::string& doc) override {
    const std::string range = range_text(min, max);
    row(k, "list of numbers", unit, def.empty() ? "(none)" : code(text(def)),
        range.empty() ? "" : "each " + range, doc);
  }
  // Shown under the section it governs, or at the end of its key's description.
  void applies_when(const std::string& key, const std::string& when,
                    const std::function<bool()>&) override {
    const std::string& section = stack_.back()->path;
    when_[join_key(section, key)] = expand_when(when, section, true);
  }
  // The element's keys once, in a section named "key[]" (rows `key[].name`, ...).
  void section_list(const std::string& k, SectionList& list, const std::string& doc) override {
    begin_section(k + "[]", doc);
    list.prototype()->visit(*this);
    end_section();
  }

 private:
  struct Section {
    std::string path, doc, when;
    std::vector<std::string> rows;
    std::vector<std::unique_ptr<Section>> children;
  };

  static std::string code(const std::string& s) { return "`" + s + "`"; }
  static std::string cell(std::string s) {
    std::string out;
    for (char c : s) {
      if (c == '|')
        out += "\\|";
      else if (c == '\n')
        out += ' ';
      else
        out += c;
    }
    return out;
  }

  std::string when_of(const std::string& key) const {
    const auto it = when_.find(key);
    return it == when_.end() ? std::string() : "Applies only when " + it->second + ".";
  }

  void row(const std::string& key, const std::string& type, const std::string& unit,
           const std::string& def, const std::string& range, const std::string& doc) {
    const std::string path = join_key(stack_.back()->path, key);
    const std::string when = when_of(path);
    stack_.back()->rows.push_back("| " + code(path) + " | " + type + " | " + cell(unit) + " | " +
                                  cell(def) + " | " + cell(range) + " | " + cell(doc) +
                                  (when.empty() ? "" : " " + cell(when)) + " |");
  }

  static void render_section(const Section& sec, int level, std::string& s) {
    if (!sec.path.empty()) {
      s += "\n" + std::string(static_cast<size_t>(std::min(level, 6)), '#') + " `" + sec.path +
           "`\n";
      if (!sec.doc.empty()) s += "\n" + sec.doc + "\n";
      if (!sec.when.empty()) s += "\n" + sec.when + "\n";
    }
    if (!sec.rows.empty()) {
      s += "\n| Key | Type | Unit | Default | Range / allowed values | Description |\n";
      s += "|---|---|---|---|---|---|\n";
      for (const auto& r : sec.rows) s += r + "\n";
    }
    for (const auto& c : sec.children) render_section(*c, level + 1, s);
  }

  Section root_;
  std::vector<Section*> stack_;
  std::map<std::string, std::string> when_;  // key or section -> its condition (code spans)
};

}  // namespace

namespace {

// copy_values: one visitor records the values in visiting order, the other plays them back.
using Value = std::variant<int64_t, double, bool, Time, Bytes, BitRate, Frequency, std::string,
                           std::vector<double>, size_t>;

class Recorder final : public Visitor {
 public:
  std::vector<Value> values;
  void begin_section(const std::string&, const std::string&) override {}
  void end_section() override {}
  void param(const std::string&, int64_t& v, int64_t, int64_t, int64_t, const std::string&,
             const std::string&) override {
    values.emplace_back(v);
  }
  void param(const std::string&, double& v, double, double, double, const std::string&,
             const std::string&) override {
    values.emplace_back(v);
  }
  void param(const std::string&, bool& v, bool, const std::string&) override {
    values.emplace_back(v);
  }
  void param(const std::string&, Time& v, Time, Time, Time, const std::string&) override {
    values.emplace_back(v);
  }
  void param(const std::string&, Bytes& v, Bytes, Bytes, Bytes, const std::string&) override {
    values.emplace_back(v);
  }
  void param(const std::string&, BitRate& v, BitRate, BitRate, BitRate,
             const std::string&) override {
    values.emplace_back(v);
  }
  void param(const std::string&, Frequency& v, Frequency, Frequency, Frequency,
             const std::string&) override {
    values.emplace_back(v);
  }
  void param(const std::string&, std::string& v, const std::string&, const std::string&) override {
    values.emplace_back(v);
  }
  void choice(const std::string&, std::string& v, const std::string&,
              const std::vector<std::string>&, const std::string&) override {
    values.emplace_back(v);
  }
  void list(const std::string&, std::vector<double>& v, const std::vector<double>&, double, double,
            const std::string&, const std::string&) override {
    values.emplace_back(v);
  }
  void section_list(const std::string&, SectionList& l, const std::string&) override {
    values.emplace_back(l.size());
    for (size_t i = 0; i < l.size(); ++i) l.at(i).visit(*this);
  }
};

class Player final : public Visitor {
 public:
  explicit Player(const std::vector<Value>& v) : values_(v) {}
  void begin_section(const std::string&, const std::string&) override {}
  void end_section() override {}
  void param(const std::string&, int64_t& v, int64_t, int64_t, int64_t, const std::string&,
             const std::string&) override {
    take(v);
  }
  void param(const std::string&, double& v, double, double, double, const std::string&,
             const std::string&) override {
    take(v);
  }
  void param(const std::string&, bool& v, bool, const std::string&) override { take(v); }
  void param(const std::string&, Time& v, Time, Time, Time, const std::string&) override {
    take(v);
  }
  void param(const std::string&, Bytes& v, Bytes, Bytes, Bytes, const std::string&) override {
    take(v);
  }
  void param(const std::string&, BitRate& v, BitRate, BitRate, BitRate,
             const std::string&) override {
    take(v);
  }
  void param(const std::string&, Frequency& v, Frequency, Frequency, Frequency,
             const std::string&) override {
    take(v);
  }
  void param(const std::string&, std::string& v, const std::string&, const std::string&) override {
    take(v);
  }
  void choice(const std::string&, std::string& v, const std::string&,
              const std::vector<std::string>&, const std::string&) override {
    take(v);
  }
  void list(const std::string&, std::vector<double>& v, const std::vector<double>&, double, double,
            const std::string&, const std::string&) override {
    take(v);
  }
  void section_list(const std::string&, SectionList& l, const std::string&) override {
    size_t n = 0;
    take(n);
    l.reset(n);
    for (size_t i = 0; i < n; ++i) l.at(i).visit(*this);
  }

 private:
  template <class T>
  void take(T& v) {
    v = std::get<T>(values_.at(next_++));  // a different type: not the same section's visit
  }
  const std::vector<Value>& values_;
  size_t next_ = 0;
};

}  // namespace

void copy_values(Configurable& from, Configurable& to) {
  Recorder r;
  from.visit(r);
  Player p(r.values);
  to.visit(p);
}

std::string to_yaml(Configurable& cfg) {
  YamlWriter w;
  cfg.visit(w);
  return w.finish();
}

nlohmann::json to_json(Configurable& cfg) {
  JsonWriter w;
  cfg.visit(w);
  return std::move(w.result);
}

std::string to_markdown(Configurable& cfg, const std::string& title) {
  DocWriter w;
  cfg.visit(w);
  return w.render(title);
}

}  // namespace fabricsim::config
